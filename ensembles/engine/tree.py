"""Flat array trees. Node i's structure is the pair nodes[2i], nodes[2i + 1] of uint32: a split
of feature f at bin b, missing values going right when r = 1, is (f 2^9 + b 2 + r, left
child): binned codes <= b, raw values x <= threshold[i], go left. Its right child is left + 1
(the growers make children in pairs: node_arrays.record_split). A leaf is (0, i), its own left
child; its threshold is a quiet NaN whose low 32 bits are its row s of `value`, which holds
the leaves' values only, in node order: it predicts value[s, :]. A split on a set of
categories has b = SET_SPLIT_BIN and sends the codes in the set category_bits[i] left
(categories).

    bit   31 ........ 9   8 ...... 1   0        32 ......... 0
          | feature    | split bin  | NaN right | left child  |

The pairs are what PackedEnsemble's lockstep walk reads: a row's step is one 8-byte load and
a threshold. A tree has n_leaves = (n_nodes + 1) / 2: every split has two children.
"""

from dataclasses import dataclass

import numba
import numpy as np
from numba import njit, prange

from ensembles.engine.array_views import address_of, float_rows_at, floats_at, uint32s_at
from ensembles.engine.binning import MISSING_BIN, raw_thresholds_into
from ensembles.engine.categories import CATEGORY_SET, SET_WORDS, category_code, in_set

LEAF = -1
FEATURE_SHIFT = 9  # the feature's bits in a node's first word
SET_SPLIT_BIN = MISSING_BIN  # no numeric split is at the missing bin
MAX_SPLIT_FEATURES = 1 << 23  # features a tree can split on: 23 bits
LEAF_NAN = np.uint64(0x7FF8_0000_0000_0000)  # a quiet NaN: a leaf's threshold is it | value row
VALUE_ROW_BITS = np.uint64(0xFFFF_FFFF)


@dataclass(frozen=True)
class Tree:
    """One grown tree (the module's docstring: its node pairs and leaf rows). `gain` is the
    split gain (the importance unit), 0 at leaves. Its memory is a forest's: 24 bytes a node
    (pair, threshold, gain, row count) and 8 a leaf and output. A two-class forest tree is 32
    bytes a node; it was 40 with values at the splits too, and 61 with five arrays in place of
    the pair and float64 gains."""

    nodes: np.ndarray  # uint32 (2 n_nodes,): the (split, left child) pairs above
    threshold: np.ndarray  # float64, the same split in raw values: x <= threshold; at a leaf,
    # LEAF_NAN | its value row
    value: np.ndarray  # float64, (n_leaves, n_outputs), the leaves' in node order
    gain: np.ndarray  # float32, as XGBoost's loss_chg and LightGBM's split_gain
    n_samples: np.ndarray  # int32, training rows reaching the node
    category_bits: np.ndarray  # uint32 (n_nodes, SET_WORDS), or no rows without set splits

    @classmethod
    def from_grown(cls, arrays: tuple, bin_mapper) -> "Tree":
        """A Tree from a grower's arrays (node_arrays.GrownTree: feature, threshold_bin,
        missing_left, left, right, value, gain, n_samples, category_bits, one row a node)."""
        return cls.from_fields(tree_fields(arrays, bin_mapper.n_bins_, bin_mapper.padded_edges))

    @classmethod
    def from_fields(cls, fields: tuple) -> "Tree":
        """A Tree from tree_fields' tuple (a boosting round's shrunk in its compiled call:
        gradient_grower.grow_gradient_tree_fields)."""
        nodes, threshold, leaf_value, gain, n_samples, category_bits, valid = fields
        if not valid:
            raise ValueError(f"a grown tree needs right[i] == left[i] + 1 at every split, split "
                             f"bins 0..{SET_SPLIT_BIN - 1} and features below "
                             f"{MAX_SPLIT_FEATURES}")
        return cls(nodes, threshold, leaf_value, gain, n_samples, category_bits)

    @property
    def n_nodes(self) -> int:
        return self.threshold.shape[0]

    @property
    def is_leaf(self) -> np.ndarray:
        return self.nodes[1::2] == np.arange(self.n_nodes)

    @property
    def feature(self) -> np.ndarray:
        """Split feature per node (int32), LEAF at leaves."""
        return np.where(self.is_leaf, LEAF, self.nodes[0::2] >> FEATURE_SHIFT).astype(np.int32)

    @property
    def threshold_bin(self) -> np.ndarray:
        """Split bin per node (int32): codes <= it go left; CATEGORY_SET at a split on a set,
        0 at leaves."""
        split_bin = (self.nodes[0::2] >> 1) & 0xFF
        return np.where(split_bin == SET_SPLIT_BIN, CATEGORY_SET, split_bin).astype(np.int32)

    @property
    def missing_left(self) -> np.ndarray:
        """Whether missing values go left at each split (False at leaves)."""
        return ~self.is_leaf & (self.nodes[0::2] & 1 == 0)

    @property
    def left(self) -> np.ndarray:
        """Left child per node (int32), LEAF at leaves."""
        return np.where(self.is_leaf, LEAF, self.nodes[1::2]).astype(np.int32)

    @property
    def right(self) -> np.ndarray:
        """Right child per node (int32): left + 1, LEAF at leaves."""
        return np.where(self.is_leaf, LEAF, self.nodes[1::2] + 1).astype(np.int32)

    @property
    def value_row(self) -> np.ndarray:
        """The row of `value` each leaf predicts (int64), -1 at splits."""
        rows = (self.threshold.view(np.uint64) & VALUE_ROW_BITS).astype(np.int64)
        return np.where(self.is_leaf, rows, -1)

    @property
    def has_category_sets(self) -> bool:
        return self.category_bits.shape[0] > 0

    @property
    def n_leaves(self) -> int:
        return int(np.count_nonzero(self.is_leaf))

    @property
    def depth(self) -> int:
        return int(_node_depths(self.nodes).max())

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Leaf values (n_samples, n_outputs) for raw float X (NaN allowed)."""
        out = np.zeros((X.shape[0], self.value.shape[1]))
        self.add_to(X, out)
        return out

    def predict_binned(self, codes: np.ndarray) -> np.ndarray:
        """Leaf values for uint8 codes made by the BinMapper the tree was grown on."""
        out = np.zeros((codes.shape[0], self.value.shape[1]))
        self.add_binned(codes, out)
        return out

    def add_binned(self, codes: np.ndarray, out: np.ndarray) -> None:
        """out += leaf values for binned codes, in place."""
        _add_leaf_values_binned(self.nodes, self.threshold, self.category_bits, self.value,
                                codes, out)

    def apply_binned(self, codes: np.ndarray) -> np.ndarray:
        """The value row of the leaf each row of binned `codes` falls in."""
        return _value_rows_binned(self.nodes, self.threshold, self.category_bits, codes)

    def add_to(self, X: np.ndarray, out: np.ndarray, scale: float = 1.0) -> None:
        """out += scale * leaf values: the in-place sum an ensemble prediction is made of."""
        _add_leaf_values_raw(self.nodes, self.threshold, self.category_bits, self.value, X,
                             scale, out)

    def add_by_partition(self, partition: np.ndarray, node_start: np.ndarray,
                         columns: np.ndarray, out: np.ndarray) -> None:
        """out[i] += leaf value of training row i, read from the grower's partition (the rows
        of node j are partition[node_start[j]:node_start[j] + n_samples[j]], increasing, and
        the partition holds rows 0 .. len(out) - 1): no tree walk.
        The rows of a split whose children have node_start -1 (not partitioned) take one step
        down it, reading their codes in `columns` (column-major, as grown)."""
        add_leaf_values_by_partition(self.nodes, self.threshold, self.category_bits,
                                     self.value, partition, node_start, self.n_samples, columns,
                                     out)

    def feature_gains(self, n_features: int) -> np.ndarray:
        """Total split gain per feature (the gain importance of XGBoost / sklearn's MDI)."""
        internal = self.feature != LEAF
        return np.bincount(self.feature[internal], weights=self.gain[internal],
                           minlength=n_features)


@dataclass(frozen=True)
class PackedEnsemble:
    """Trees packed once for prediction. add_to: out += the sum of the trees' leaf values on
    raw X, in one pass: blocks of ROW_BLOCK rows in parallel, each block walked down every tree
    while its rows stay in cache. Each row adds the trees in list order, the sums of calling
    Tree.add_to tree after tree.

    Packing copies nothing: the walk reads each tree's own node pairs, thresholds and leaf
    values (the module's docstring) at their addresses (array_views). A split sends x right
    when x > threshold, or when x is NaN and missing values go right (x > NaN is false at a
    leaf, which is its own left child: a row at a leaf stays there, then adds the value row
    that the NaN holds). Copied into one table with the thresholds and values, the packed
    trees were 32 bytes a node more and 17 MB of a forest fit's peak memory (100 trees of
    10,000 nodes, measured); read where they are, the prediction was as fast. An estimator
    keeps its packed trees; a pickled PackedEnsemble packs its loaded trees again (addresses
    do not survive a copy).

    Trees with set splits (categorical features) are not packed: they are added one after the
    other by the plain walk of Tree.add_to, which reads the sets.

    The rows of a block walk each tree in lockstep, one level per step for as many steps as
    the tree is deep (a row at a leaf stays there): the rows' walks are independent chains of
    loads that the processor overlaps, and no step ends in a mispredicted branch. This beat
    walking each row to its own leaf even on forest trees of depth 28-37 (1.5x, measured);
    on 31-leaf loss-guided trees of depth up to 17 it is 5x faster; stopping a block once no
    row moves was slower (a test per row and step). A block without NaN (most blocks of most
    data) compares x > threshold only.
    """

    trees: tuple[Tree, ...]
    depths: np.ndarray | None = None  # None: trees with set splits, walked one by one
    sizes: np.ndarray | None = None  # nodes per tree
    addresses: np.ndarray | None = None  # per tree: its nodes, thresholds, values (columns)
    read_arrays: tuple = ()  # the arrays at `addresses`, kept alive here

    @classmethod
    def of(cls, trees: list[Tree]) -> "PackedEnsemble":
        """The trees packed; ValueError if a tree's values are not one row a leaf (a tree
        pickled before values were kept for the leaves only: the walk would read past them)."""
        if any(tree.value.shape[0] != (tree.n_nodes + 1) // 2 for tree in trees):
            raise ValueError("a tree's values must be one row a leaf, (n_nodes + 1) / 2 rows; "
                             "a model pickled by an older version must be fitted again")
        if any(tree.has_category_sets for tree in trees):
            return cls(tuple(trees))
        read = [(np.ascontiguousarray(tree.nodes, dtype=np.uint32),
                 np.ascontiguousarray(tree.threshold, dtype=np.float64),
                 np.ascontiguousarray(tree.value, dtype=np.float64)) for tree in trees]
        entries = np.array([_walk_entry(*arrays) for arrays in read],
                           dtype=np.int64).reshape(len(trees), 4)
        return cls(tuple(trees), entries[:, 3].copy(),
                   np.array([tree.n_nodes for tree in trees], dtype=np.int64),
                   entries[:, :3].copy(), tuple(read))

    def __reduce__(self):
        return PackedEnsemble.of, (list(self.trees),)

    def packs(self, trees: list[Tree]) -> bool:
        """Whether these are the very trees packed here (the same objects, in order)."""
        return len(trees) == len(self.trees) and all(
            tree is packed for tree, packed in zip(trees, self.trees, strict=True))

    def add_to(self, X: np.ndarray, out: np.ndarray) -> None:
        if self.depths is None:
            for tree in self.trees:
                tree.add_to(X, out)
            return
        self.add_lockstep(X, out[np.newaxis], 0, len(self.trees),
                          self.group_blocks(X.shape[0]))

    def tree_values(self, X: np.ndarray, first: int, stop: int) -> np.ndarray:
        """(stop - first, n_rows, n_outputs): the leaf values of trees first .. stop - 1 on raw
        X, each tree's apart, in one pass (an ensemble's members one by one)."""
        trees = range(first, min(stop, len(self.trees)))
        out = np.zeros((len(trees), X.shape[0], self.trees[0].value.shape[1]))
        if self.depths is None:
            for index, tree in enumerate(trees):
                self.trees[tree].add_to(X, out[index])
        else:
            self.add_lockstep(X, out, first, stop, self.group_blocks(X.shape[0]))
        return out

    def add_lockstep(self, X: np.ndarray, out: np.ndarray, first: int, stop: int,
                     group_blocks: int) -> None:
        """out += the values of trees first .. stop - 1 (out (1, n_rows, n_outputs): their
        sum; (stop - first, n_rows, n_outputs): each tree's own), walked by groups of
        `group_blocks` row blocks."""
        _add_lockstep_values(self.depths[first:stop], self.sizes[first:stop],
                             self.addresses[first:stop], self.trees[0].value.shape[1], X,
                             group_blocks, out)

    def group_blocks(self, n_rows: int) -> int:
        """Row blocks that walk a tree before the next tree: about one row per node of the
        mean tree, so that a large tree's nodes are read from memory once per group and not
        once per block (100 forest trees of 11k nodes: 2.5x faster with 64 blocks), while a
        small tree's group is one block, whose rows stay in L1 (64 blocks were 1.3-1.8x slower
        on depth-6 trees); at most MAX_GROUP_BLOCKS, and at least 4 groups per thread."""
        mean_nodes = int(self.sizes.mean())
        n_blocks = -(-n_rows // ROW_BLOCK)
        by_size = min(mean_nodes // ROW_BLOCK, MAX_GROUP_BLOCKS)
        return max(1, min(by_size, n_blocks // (4 * numba.get_num_threads())))


@njit(cache=True)
def _pair_nodes(feature, threshold_bin, missing_left, left, right, nodes):
    """Write the node pairs of a grower's arrays into `nodes` (the module's docstring); False
    when a split's right child is not left + 1, its bin not below SET_SPLIT_BIN (nor a set)
    or its feature not below MAX_SPLIT_FEATURES."""
    for i in range(feature.shape[0]):
        if feature[i] == LEAF:
            nodes[2 * i] = 0
            nodes[2 * i + 1] = i
        else:
            is_set = threshold_bin[i] == CATEGORY_SET
            split_bin = SET_SPLIT_BIN if is_set else threshold_bin[i]
            if (right[i] != left[i] + 1 or not (is_set or 0 <= split_bin < SET_SPLIT_BIN)
                    or feature[i] >= MAX_SPLIT_FEATURES):
                return False
            nodes[2 * i] = ((feature[i] << FEATURE_SHIFT) + (split_bin << 1)
                            + (0 if missing_left[i] else 1))
            nodes[2 * i + 1] = left[i]
    return True


@njit(cache=True, nogil=True)
def tree_fields(grown, n_bins, padded_edges):
    """A Tree's fields from a grower's arrays (node_arrays.GrownTree, or the same arrays in a
    tuple) and the bin mapper's n_bins_ and padded_edges, in one compiled call (three calls
    from Python and their numpy took 6 us a GBT tree, 0.4 ms before they were compiled): node
    pairs (_pair_nodes), raw thresholds with the leaves marked, the leaves' values, float32
    gains, row counts, category sets (no rows without a set split), and valid: False when
    _pair_nodes refuses the tree."""
    (feature, threshold_bin, missing_left, left, right, value, gain, n_samples,
     category_bits) = grown
    n_nodes = feature.shape[0]
    nodes = np.empty(2 * n_nodes, dtype=np.uint32)
    valid = _pair_nodes(feature, threshold_bin, missing_left, left, right, nodes)
    n_leaves = 0
    has_sets = False
    for i in range(n_nodes):
        if feature[i] == LEAF:
            n_leaves += 1
        elif threshold_bin[i] == CATEGORY_SET:
            has_sets = True
    leaf_value = np.empty((n_leaves, value.shape[1]))
    row = 0
    for i in range(n_nodes):
        if feature[i] == LEAF:
            leaf_value[row] = value[i]
            row += 1
    threshold = np.empty(n_nodes)
    if valid:  # a refused tree's features may lie beyond the edges' table
        raw_thresholds_into(feature, threshold_bin, n_bins, padded_edges, threshold)
        _mark_leaves(feature, threshold)
    if not has_sets:
        category_bits = np.empty((0, SET_WORDS), dtype=np.uint32)
    return nodes, threshold, leaf_value, gain.astype(np.float32), n_samples, category_bits, valid


@njit(cache=True, nogil=True)
def _mark_leaves(feature, threshold):
    """threshold[i] = LEAF_NAN | the value row of leaf i, the leaves counted in node order."""
    threshold_bits = threshold.view(np.uint64)
    row = np.uint64(0)
    for i in range(feature.shape[0]):
        if feature[i] == LEAF:
            threshold_bits[i] = LEAF_NAN | row
            row += np.uint64(1)


@njit(cache=True, nogil=True, inline="always")
def _split_of(nodes, node):
    """(feature, split bin, missing values go left, left child) of node `node`; the feature
    is -1 (LEAF) at a leaf."""
    word = np.int64(nodes[2 * node])
    left = np.int64(nodes[2 * node + 1])
    return ((LEAF if left == node else word >> FEATURE_SHIFT), (word >> 1) & 0xFF,
            word & 1 == 0, left)


ROW_BLOCK = 64
MAX_GROUP_BLOCKS = 64  # 4096 rows a group: 11k-node forest trees were as fast with 64 to 256
PARTITION_ROW_BLOCK = 1 << 14  # rows per parallel item of add_by_partition


@njit(cache=True, inline="always")
def _child(nodes, threshold, node, X, row):
    """The child of `node` that row X[row] goes to (unsigned indices: no wraparound test)."""
    packed = nodes[np.uint64(2) * node]
    x = X[row, packed >> np.uint32(FEATURE_SHIFT)]
    go_right = (x > threshold[node]) | ((x != x) & (packed & np.uint32(1) != 0))
    return nodes[np.uint64(2) * node + np.uint64(1)] + np.uint32(go_right)


@njit(cache=True, inline="always")
def _child_of_number(nodes, threshold, node, X, row):
    """_child for an X[row] known not to be NaN: 35% faster than _child (measured)."""
    x = X[row, nodes[np.uint64(2) * node] >> np.uint32(FEATURE_SHIFT)]
    return nodes[np.uint64(2) * node + np.uint64(1)] + np.uint32(x > threshold[node])


@njit(cache=True, nogil=True, inline="always")
def _value_row(threshold_bits, leaf):
    """The value row of a leaf, from its threshold's bits (the module's docstring)."""
    return threshold_bits[leaf] & VALUE_ROW_BITS


@njit(cache=True, inline="always")
def _add_leaves(value, threshold_bits, leaves, first, n_block, out, target):
    """out[target, first + r] += the values of leaf leaves[r] for the block's rows (one
    output: no inner loop, 10% of a prediction measured)."""
    if value.shape[1] == 1:
        for r in range(n_block):
            out[target, first + r, 0] += value[_value_row(threshold_bits, leaves[r]), 0]
    else:
        for r in range(n_block):
            row = _value_row(threshold_bits, leaves[r])
            for k in range(value.shape[1]):
                out[target, first + r, k] += value[row, k]


@njit(cache=True, inline="always")
def _block_has_nan(X, first, n_block):
    """Whether rows X[first:first + n_block] hold a NaN: their sum is NaN then (and, harmlessly,
    when it meets both infinities). A loop: numba's .sum() of the slice allocated in the worker
    threads, and a later fit's peak memory rose 5 MB (measured)."""
    total = 0.0
    for r in range(first, first + n_block):
        for j in range(X.shape[1]):
            total += X[r, j]
    return np.isnan(total)


NODES, THRESHOLDS, VALUES = 0, 1, 2  # the columns of PackedEnsemble.addresses


@njit(cache=True, parallel=True)
def _add_lockstep_values(depths, sizes, addresses, n_outputs, X, group_blocks, out):
    """PackedEnsemble.add_lockstep: groups of group_blocks row blocks in parallel; within a
    group, tree after tree (its arrays read at `addresses`), each block walks the tree in
    lockstep. out is (1, n_rows, n_outputs), the sum of the trees, or (n_trees, n_rows,
    n_outputs), each tree's own values."""
    n_rows = X.shape[0]
    n_blocks = (n_rows + ROW_BLOCK - 1) // ROW_BLOCK
    has_nan = np.empty(n_blocks, dtype=np.bool_)
    for block in prange(n_blocks):
        first = block * ROW_BLOCK
        has_nan[block] = _block_has_nan(X, first, min(ROW_BLOCK, n_rows - first))
    for group in prange((n_blocks + group_blocks - 1) // group_blocks):
        at = np.empty(ROW_BLOCK, dtype=np.uint32)
        for tree in range(depths.shape[0]):
            nodes = uint32s_at(addresses[tree, NODES], 2 * sizes[tree])
            threshold = floats_at(addresses[tree, THRESHOLDS], sizes[tree])
            value = float_rows_at(addresses[tree, VALUES], (sizes[tree] + 1) // 2, n_outputs)
            for block in range(group * group_blocks, min(n_blocks, (group + 1) * group_blocks)):
                first = block * ROW_BLOCK
                n_block = min(ROW_BLOCK, n_rows - first)
                at[:] = 0
                for _ in range(depths[tree]):
                    if has_nan[block]:
                        for r in range(n_block):
                            at[r] = _child(nodes, threshold, np.uint64(at[r]), X,
                                           np.uint64(first + r))
                    else:
                        for r in range(n_block):
                            at[r] = _child_of_number(nodes, threshold, np.uint64(at[r]), X,
                                                     np.uint64(first + r))
                _add_leaves(value, threshold.view(np.uint64), at, first, n_block, out,
                            tree if out.shape[0] > 1 else 0)


@njit(cache=True, nogil=True, inline="always")
def _code_goes_left(code, node, split_bin, missing_left, category_bits):
    """Whether a row of bin `code` goes left at split `node`."""
    if split_bin == SET_SPLIT_BIN:
        return in_set(category_bits[node], code)
    if code == MISSING_BIN:
        return missing_left
    return code <= split_bin


@njit(cache=True, parallel=True)
def _add_leaf_values_raw(nodes, threshold, category_bits, value, X, scale, out):
    threshold_bits = threshold.view(np.uint64)
    for i in prange(X.shape[0]):
        node = np.int64(0)
        feature, split_bin, missing_left, left = _split_of(nodes, node)
        while feature != LEAF:
            x = X[i, feature]
            if split_bin == SET_SPLIT_BIN:
                go_left = in_set(category_bits[node], category_code(x))
            elif np.isnan(x):
                go_left = missing_left
            else:
                go_left = x <= threshold[node]
            node = left if go_left else left + 1
            feature, split_bin, missing_left, left = _split_of(nodes, node)
        row = _value_row(threshold_bits, node)
        for k in range(value.shape[1]):
            out[i, k] += scale * value[row, k]


@njit(cache=True, parallel=True)
def _value_rows_binned(nodes, threshold, category_bits, codes):
    threshold_bits = threshold.view(np.uint64)
    leaf = np.empty(codes.shape[0], dtype=np.int32)
    for i in prange(codes.shape[0]):
        node = np.int64(0)
        feature, split_bin, missing_left, left = _split_of(nodes, node)
        while feature != LEAF:
            go_left = _code_goes_left(codes[i, feature], node, split_bin, missing_left,
                                      category_bits)
            node = left if go_left else left + 1
            feature, split_bin, missing_left, left = _split_of(nodes, node)
        leaf[i] = _value_row(threshold_bits, node)
    return leaf


@njit(cache=True, parallel=True)
def _add_leaf_values_binned(nodes, threshold, category_bits, value, codes, out):
    leaf = _value_rows_binned(nodes, threshold, category_bits, codes)
    for i in prange(codes.shape[0]):
        for k in range(value.shape[1]):
            out[i, k] += value[leaf[i], k]


@njit(cache=True)
def add_leaf_values_by_partition(nodes, threshold, category_bits, value, partition,
                                 node_start, n_samples, columns, out):
    """The final ranges of the partition (a leaf's rows, or the rows of a split that were not
    partitioned) hold every row once, each range's rows increasing (the grower's partition is
    stable and starts from increasing rows). Blocks of PARTITION_ROW_BLOCK rows are added in
    parallel: a block finds its rows in each range by binary search and adds them, so that a
    thread writes to its block's 128 KB of `out` only, which stays in cache. Cutting the
    partition's positions into blocks instead sent each thread's writes all over `out`:
    2.3 against 0.95 ms for 800k rows, 0.9 against 0.32 ms for a 240k-row column of an
    8-class fit (measured; blocks of 4k-64k rows were within 30%, 256k rows 1.8 ms). A
    range's values are read once before its rows. A split that was not partitioned has two
    leaves (the growers partition every split whose children may split). A single block is
    added without a parallel region (histogram.SERIAL_WORK)."""
    n_nodes = nodes.shape[0] // 2
    final = np.zeros(n_nodes, dtype=np.bool_)
    for node in range(n_nodes):
        left = nodes[2 * node + 1]
        final[node] = node_start[node] >= 0 and (left == node or node_start[left] < 0)
    ranges = np.flatnonzero(final)
    n_rows = out.shape[0]
    if n_rows <= PARTITION_ROW_BLOCK:
        _add_partition_block(nodes, threshold, category_bits, value, partition, node_start,
                             n_samples, columns, ranges, np.int64(0), n_rows, out)
        return
    _add_partition_blocks(nodes, threshold, category_bits, value, partition, node_start,
                          n_samples, columns, ranges, out)


@njit(cache=True, parallel=True)
def _add_partition_blocks(nodes, threshold, category_bits, value, partition, node_start,
                          n_samples, columns, ranges, out):
    """_add_partition_block of every block of PARTITION_ROW_BLOCK rows, in parallel."""
    n_rows = out.shape[0]
    for block in prange((n_rows + PARTITION_ROW_BLOCK - 1) // PARTITION_ROW_BLOCK):
        lo = np.int64(block * PARTITION_ROW_BLOCK)
        _add_partition_block(nodes, threshold, category_bits, value, partition, node_start,
                             n_samples, columns, ranges, lo,
                             min(lo + PARTITION_ROW_BLOCK, n_rows), out)


@njit(cache=True, nogil=True)
def _add_partition_block(nodes, threshold, category_bits, value, partition, node_start,
                         n_samples, columns, ranges, lo, hi, out):
    """out[row] += the leaf value of each training row lo <= row < hi, range after range
    (add_leaf_values_by_partition)."""
    threshold_bits = threshold.view(np.uint64)
    for node in ranges:
        start = node_start[node]
        rows = partition[start:start + n_samples[node]]
        first = np.uint64(start + np.searchsorted(rows, lo))
        stop = np.uint64(start + np.searchsorted(rows, hi))
        feature, split_bin, missing_left, left = _split_of(nodes, node)
        for k in range(value.shape[1]):
            if feature == LEAF:
                leaf_value = value[_value_row(threshold_bits, node), k]
                for p in range(first, stop):
                    out[np.uint64(partition[p]), k] += leaf_value
            else:
                column = columns[:, feature]
                left_value = value[_value_row(threshold_bits, left), k]
                right_value = value[_value_row(threshold_bits, left + 1), k]
                for p in range(first, stop):
                    row = np.uint64(partition[p])
                    goes_left = _code_goes_left(column[row], node, split_bin,
                                                missing_left, category_bits)
                    out[row, k] += left_value if goes_left else right_value


@njit(cache=True)
def _walk_entry(nodes, threshold, value):
    """A tree's entry in PackedEnsemble: the addresses of its node pairs, thresholds and
    values, and its depth, in one compiled call (in Python, three addresses and the depth
    took 6 us a tree, 2% of a 100-round GBT fit on 2,000 rows)."""
    return (address_of(nodes), address_of(threshold), address_of(value),
            np.int64(_node_depths(nodes).max()))


@njit(cache=True)
def _node_depths(nodes):
    depth = np.zeros(nodes.shape[0] // 2, dtype=np.int32)
    for node in range(depth.shape[0]):
        left = nodes[2 * node + 1]
        if left != node:
            depth[left] = depth[node] + 1
            depth[left + 1] = depth[node] + 1
    return depth
