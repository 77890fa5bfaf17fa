"""Growth of one CART tree on binned data: random features per node, best or random thresholds.

The node's rows are a slice of one partition array that each split reorders in place (left rows
first). A node's best split is found when the node is created: `max_features` features are drawn
at random (without replacement) and the non-constant ones scored; when all of them are constant
in the node, further features are drawn one at a time until one is not (or none is left), as in
scikit-learn's CART (a random subset of the features per node, the seed's "Random Subset of
Features"). A feature constant in a node is constant in its descendants: each node keeps the set
of features known to be constant in it (`known_constant`, bits), and a drawn feature of that set
counts as drawn without reading a row (scikit-learn's n_known_constants). The histograms of a
batch of drawn features are built in one pass over the node's rows (cart_histogram); extra trees
cut their numeric drawn features from the node's rows without a histogram
(_offer_random_row_splits). A best threshold lies halfway between the node's occupied bins on
either side (gap_midpoint), as CART's midpoint between values. A categorical feature is split
into two sets of categories (categories: best_cart_set, random_cart_set). Nodes are then split
depth first, or, with max_leaves > 0, best first (largest gain).
"""

from typing import NamedTuple

import numpy as np
from numba import njit

from ensembles.engine import node_arrays
from ensembles.engine.binning import MISSING_BIN, N_BIN_SLOTS
from ensembles.engine.borrowing import borrowing
from ensembles.engine.cart_histogram import (
    SQUARED_ERROR_STATS,
    TWO_CLASS_STATS,
    build_drawn_histograms,
    clear_bins,
    node_bins,
    occupied_bins,
)
from ensembles.engine.cart_partition import partition_node
from ensembles.engine.categories import (
    add_to_set,
    best_cart_set,
    clear_set_scratch,
    empty_set_scratch,
    in_set,
    random_cart_set,
)
from ensembles.engine.histogram import HISTOGRAM_BINS, sum_node_stats
from ensembles.engine.shuffle import shuffle_steps
from ensembles.engine.splitting import (
    GINI,
    NEWTON,
    best_missing_side,
    best_threshold,
    best_two_class_threshold,
    leaf_value,
    node_impurity,
    node_score,
    two_class_missing_side,
)

PURE_IMPURITY = 1e-12
SORTED_BINS_MAX_ROWS = 16  # below, a feature's occupied bins are sorted from the rows' codes
CUT_LOW, CUT_HIGH, CUT_MISSING, CUT_BIN = 0, 1, 2, 3  # rows of CartScratch.cut_bounds
N_CUT_BOUNDS = 4


class CartParams(NamedTuple):
    """How each tree is grown (meanings as in scikit-learn; 0: no limit, as in XGBoost).

    criterion: splitting.GINI, ENTROPY or NEWTON (squared error); max_features: how many
    features each node draws (more while all drawn are constant in it); random_splits: one
    random threshold per feature (extra trees); min_child_weight and min_split_gain as in
    XGBoost. The defaults admit every split whose children carry weight: min_child_weight is the
    smallest positive float, so a child whose weight, found by subtracting its sibling's from
    its parent's, rounds to 0 or below is no split (AdaBoost's weights span many orders of
    magnitude after a few rounds; with the exact sums of integer bootstrap counts it never
    binds)."""

    max_features: int
    criterion: int = GINI
    max_depth: int = 0
    max_leaves: int = 0
    min_samples_split: int = 2
    min_samples_leaf: int = 1
    min_child_weight: float = float(np.finfo(np.float64).tiny)
    min_split_gain: float = -np.inf
    random_splits: bool = False

    def typed(self) -> "CartParams":
        """The same parameters as the Python types of their fields: one record type, so
        numba compiles grow_cart_tree once (a numpy integer or a float in an integer field
        would be another type)."""
        return CartParams(*(kind(value) for kind, value in
                            zip(CartParams.__annotations__.values(), self, strict=True)))


class BinnedData(NamedTuple):
    """The rows a tree is grown on: their uint8 codes (n_samples, n_features), their float64
    statistics (n_samples, n_stats), and the bins of each feature (binning.BinMapper)."""

    codes: np.ndarray
    stats: np.ndarray
    n_bins: np.ndarray
    bin_upper_values: np.ndarray
    categorical: np.ndarray


class CartNodes(NamedTuple):
    """The tree being grown: its nodes (node_arrays.NodeArrays), their best splits
    (node_arrays.OpenNodes), per node the statistics' sums (with the weight last), the leaf
    value, the category set (node_arrays.empty_category_sets) and the features known to be
    constant (categories.in_set's layout), and the stack of nodes to split."""

    nodes: node_arrays.NodeArrays
    open_nodes: node_arrays.OpenNodes
    node_sums: np.ndarray
    value: np.ndarray
    category_bits: np.ndarray
    known_constant: np.ndarray
    stack: np.ndarray


class CartScratch(NamedTuple):
    """The scratch of one node's evaluation: the drawn features' histograms, the two sides'
    sums of a scan, the feature order, the drawn features a batch of histograms is built for
    and those extra trees cut from the rows, with each cut feature's smallest and largest code,
    missing rows and threshold (CUT_LOW, CUT_HIGH, CUT_MISSING, CUT_BIN), the node's occupied
    bins, the two-class scan's buffers and a set split's (categories.empty_set_scratch)."""

    hist: np.ndarray
    left: np.ndarray
    right: np.ndarray
    feature_order: np.ndarray
    drawn: np.ndarray
    cut_features: np.ndarray
    cut_bounds: np.ndarray
    bins: np.ndarray
    scan: np.ndarray
    set_scratch: tuple


class CartWorkspace(NamedTuple):
    """Room for grow_cart_tree (cart_workspace): the tree's node arrays, the partition of its
    rows with the scratch of a partition, and a node's evaluation scratch."""

    tree: CartNodes
    partition: np.ndarray
    scratch: np.ndarray
    work: CartScratch


@njit(cache=True, nogil=True)
def cart_workspace(n_rows, n_features, n_stats, criterion, max_depth, max_leaves,
                   categorical):
    """Room for grow_cart_tree on up to n_rows rows, which the trees of a fit reuse one after
    the other (CartWorkspace), the node arrays for the most nodes such rows make
    (node_arrays.max_leaf_count). A forest whose every tree made its own room left the
    threads' heaps fragmented: 10 MB more peak memory on the bench's 100 trees (measured)."""
    capacity = 2 * node_arrays.max_leaf_count(n_rows, max_depth, max_leaves) - 1
    n_outputs = 1 if criterion == NEWTON else n_stats
    tree = CartNodes(node_arrays.empty_nodes(capacity), node_arrays.empty_open_nodes(capacity),
                     np.empty((capacity, n_stats + 1)), np.empty((capacity, n_outputs)),
                     node_arrays.empty_category_sets(capacity, categorical),
                     np.empty((capacity, (n_features + 31) // 32), dtype=np.uint32),
                     np.empty(capacity, dtype=np.int32))
    work = CartScratch(np.empty((n_features, HISTOGRAM_BINS, n_stats + 1)),
                       np.empty(n_stats + 1), np.empty(n_stats + 1),
                       np.empty(n_features, dtype=np.int32), np.empty(n_features, dtype=np.int32),
                       np.empty(n_features, dtype=np.int32),
                       np.empty((N_CUT_BOUNDS, n_features), dtype=np.int64),
                       np.empty(N_BIN_SLOTS, dtype=np.int32),
                       np.empty((8, N_BIN_SLOTS)),
                       empty_set_scratch(n_stats + 1 if categorical.any() else 1))
    return CartWorkspace(tree, np.empty(n_rows, dtype=np.int32),
                         np.empty(n_rows, dtype=np.int32), work)


@njit(cache=True, nogil=True)
def grow_cart_tree(data, rows, params, seed, workspace):
    """Grow one tree on `data` (BinnedData) in `workspace` (cart_workspace, made for at least
    these rows and the same codes, statistics and limits); returns its node arrays (see
    ensembles.engine.tree.Tree).

    rows: int32 rows to use (with bootstrap, the rows drawn at least once); params: a
    CartParams (typed). max_depth <= 0 and max_leaves <= 0 mean no limit. A node is a
    leaf when it may not split (node_arrays.may_split: max_depth, min_samples_split,
    min_samples_leaf), when pure, or when no admissible split gains more than min_split_gain.
    random_splits: one random threshold per feature (extra trees); data.categorical: bool per
    feature, True for a feature split on sets of categories.
    """
    np.random.seed(seed)
    tree, work = workspace.tree, workspace.work
    n_rows = rows.shape[0]
    capacity = 2 * node_arrays.max_leaf_count(n_rows, params.max_depth,
                                              params.max_leaves) - 1
    if (tree.nodes.feature.shape[0] < capacity or workspace.partition.shape[0] < n_rows
            or work.hist.shape[0] != data.codes.shape[1]
            or work.hist.shape[2] != data.stats.shape[1] + 1):
        raise ValueError("the workspace was made for fewer rows or other codes or statistics")
    node_arrays.start_tree(tree.nodes, tree.open_nodes, tree.category_bits)
    partition = workspace.partition[:n_rows]
    for i in range(n_rows):  # loops, not array assignments: the engine's docstring
        partition[i] = rows[i]
    work.hist[:] = 0.0  # the scratch starts each tree as it started the first
    work.left[:] = 0.0
    work.right[:] = 0.0
    for j in range(work.feature_order.shape[0]):
        work.feature_order[j] = j  # as the gradient trees' features
    work.bins[:] = 0
    work.scan[:] = 0.0
    clear_set_scratch(work.set_scratch)

    tree.nodes.node_stop[0] = n_rows
    for word in range(tree.known_constant.shape[1]):  # no feature is known constant at the root
        tree.known_constant[node_arrays.ROOT, word] = 0
    sum_node_stats(partition, np.int64(0), n_rows, data.stats, tree.node_sums[0])
    n_nodes = _grow_nodes(data, partition, workspace.scratch[:n_rows], params, tree, work)
    return node_arrays.grown_tree(n_nodes, tree.nodes, tree.value, tree.category_bits)


@borrowing
def _grow_nodes(data, partition, scratch, params, tree, work):
    """Grow the tree from its root (rows partition[:], sums node_sums[0]): evaluate each new
    node, split the open nodes depth first or best first; returns the number of nodes. The
    arrays, a workspace of grow_cart_tree, are borrowed (borrowing.py)."""
    is_open, stack = tree.open_nodes.is_open, tree.stack
    max_leaves = params.max_leaves
    n_nodes = np.int64(1)
    n_leaves = np.int64(1)
    stack_size = 0
    if _evaluate_node(node_arrays.ROOT, data, partition, params, tree, work):
        is_open[0] = True
        stack[0] = 0
        stack_size = 1

    while True:
        if max_leaves > 0:
            node = node_arrays.largest_gain_open_node(tree.open_nodes, n_nodes)
        else:
            node = -1
            if stack_size > 0:
                stack_size -= 1
                node = stack[stack_size]
        if node < 0:
            break
        is_open[node] = False
        if not node_arrays.admits_split(node, tree.open_nodes, params.min_split_gain, n_leaves,
                                        max_leaves):
            continue

        _split_node(node, n_nodes, data, partition, scratch, tree)
        left_id = n_nodes
        right_id = n_nodes + 1
        n_nodes += 2
        n_leaves += 1
        for child in (right_id, left_id):
            for word in range(tree.known_constant.shape[1]):  # constant in the parent: in it too
                tree.known_constant[child, word] = tree.known_constant[node, word]
            if _evaluate_node(child, data, partition, params, tree, work):
                is_open[child] = True
                stack[stack_size] = child
                stack_size += 1
    return n_nodes


@borrowing
def _evaluate_node(node, data, partition, params, tree, work):
    """Set the node's leaf value and best split (a set split's set in category_bits[node]);
    True when the node may be split."""
    codes, stats, n_bins, categorical = data.codes, data.stats, data.n_bins, data.categorical
    criterion, min_samples_leaf, min_child_weight, max_features, random_splits = (
        params.criterion, params.min_samples_leaf, params.min_child_weight,
        params.max_features, params.random_splits)
    node_start, node_stop, node_sums = tree.nodes.node_start, tree.nodes.node_stop, tree.node_sums
    hist, left, right, feature_order, bins, set_scratch = (
        work.hist, work.left, work.right, work.feature_order, work.bins, work.set_scratch)
    n_stats = stats.shape[1]
    n_features = codes.shape[1]
    start = node_start[node]
    stop = node_stop[node]
    n_node = stop - start
    sums = node_sums[node]
    leaf_value(sums, n_stats, criterion, 0.0, 0.0, tree.value[node])
    if (not node_arrays.may_split(n_node, tree.nodes.node_depth[node], params.max_depth,
                                  params.min_samples_split, min_samples_leaf)
            or node_impurity(sums, n_stats, criterion) <= PURE_IMPURITY):
        return False
    known_constant, drawn, cut_features = tree.known_constant[node], work.drawn, work.cut_features
    n_drawn = np.int64(0)
    n_scored = 0
    while n_drawn < n_features and (n_drawn < max_features or n_scored == 0):
        n_batch = max_features - n_drawn if n_drawn < max_features else 1
        n_batch = min(n_batch, n_features - n_drawn)
        shuffle_steps(feature_order, n_drawn, n_drawn + n_batch)
        n_unknown = np.int64(0)  # typed: a literal 0 is another signature of the kernels
        n_cut = np.int64(0)
        for k in range(n_drawn, n_drawn + n_batch):
            f = feature_order[k]
            if in_set(known_constant, f):
                continue
            if random_splits and not categorical[f]:
                cut_features[n_cut] = f
                n_cut += 1
            else:
                drawn[n_unknown] = f
                n_unknown += 1
        n_drawn += n_batch
        if n_cut > 0:
            n_scored += _offer_random_row_splits(node, n_cut, data, partition, params, tree, work)
        if n_unknown == 0:
            continue
        build_drawn_histograms(codes, partition, start, stop, stats, drawn, np.int64(0), n_unknown,
                               hist)
        for k in range(n_unknown):
            f = drawn[k]
            if n_node < SORTED_BINS_MAX_ROWS:
                n_occupied = node_bins(codes, partition, start, stop, f, bins)
            else:
                n_occupied = occupied_bins(hist[k], n_bins[f], n_stats, bins)
            if n_occupied + (hist[k, MISSING_BIN, n_stats] > 0.0) <= 1:
                add_to_set(known_constant, f)
            elif categorical[f]:
                set_bits = set_scratch[3]
                if random_splits:
                    set_gain, set_missing_left = random_cart_set(
                        hist[k], bins, n_occupied, sums, criterion, min_samples_leaf,
                        min_child_weight, left, right, set_bits)
                else:
                    set_gain, set_missing_left = best_cart_set(
                        hist[k], n_bins[f], sums, criterion, min_samples_leaf, min_child_weight,
                        left, right, set_scratch, set_bits)
                node_arrays.offer_set_split(node, set_gain, f, set_missing_left, set_bits,
                                            tree.open_nodes, tree.category_bits)
                n_scored += 1
            else:
                split_gain, split_bin, split_missing_left = _feature_split(
                    hist[k], n_occupied, n_bins[f], sums, params, work)
                node_arrays.offer_split(node, split_gain, f, split_bin, split_missing_left,
                                        tree.open_nodes)
                n_scored += 1
            clear_bins(hist[k], bins, n_occupied)
    return tree.open_nodes.best_feature[node] >= 0


@borrowing
def _offer_random_row_splits(node, n_cut, data, partition, params, tree, work):
    """Extra trees' splits of the numeric features work.cut_features[:n_cut], read from the
    node's rows without a histogram (as scikit-learn's random splitter): each feature's smallest
    and largest code in the node, a threshold drawn uniformly between their values (Geurts et
    al. 2006; Straka, "Extra Trees"), "x <= u" going left: the split is "code <= b" for the
    largest b with bin_upper_values[b] <= u; the left side and the missing rows summed over the
    rows, the missing rows sent to the better side (splitting.best_missing_side), or, without
    any, NaN later following the larger side. Two passes over the node's rows for all the
    features (a row's codes are adjacent), the thresholds drawn in between in the features'
    order. A feature constant in the node joins its known constants. Returns how many features
    were not constant (they count as scored; one value and missing rows: scored, no split)."""
    codes, stats, criterion = data.codes, data.stats, params.criterion
    start, stop = tree.nodes.node_start[node], tree.nodes.node_stop[node]
    sums = tree.node_sums[node]
    n_stats = stats.shape[1]
    features, hist = work.cut_features, work.hist
    low, high = work.cut_bounds[CUT_LOW], work.cut_bounds[CUT_HIGH]
    n_missing, threshold_bin = work.cut_bounds[CUT_MISSING], work.cut_bounds[CUT_BIN]
    for k in range(n_cut):
        low[k] = MISSING_BIN
        high[k] = -1
        n_missing[k] = 0
    for position in range(start, stop):  # unsigned indices: numba wraps negative ones
        row = np.uint64(partition[position])
        for k in range(n_cut):
            code = np.int64(codes[row, np.uint64(features[k])])
            if code == MISSING_BIN:
                n_missing[k] += 1
            else:
                low[k] = min(low[k], code)
                high[k] = max(high[k], code)
    n_scored = 0
    n_split = 0  # the features with a threshold, moved to the front in their order
    for k in range(n_cut):
        if high[k] < 0 or (low[k] == high[k] and n_missing[k] == 0):
            add_to_set(tree.known_constant[node], features[k])
            continue
        n_scored += 1
        if low[k] == high[k]:
            continue
        upper = data.bin_upper_values[features[k]]
        draw = upper[low[k]] + np.random.random() * (upper[high[k]] - upper[low[k]])
        # the largest b with upper[b] <= draw, as a max (vectorized) over unsigned b (loads
        # without numba's wraparound of negative indices, which made them gathers)
        lowest = np.uint64(low[k])
        cut = lowest
        for b in range(lowest + np.uint64(1), np.uint64(high[k])):
            cut = max(cut, b if upper[b] <= draw else lowest)
        features[n_split] = features[k]
        n_missing[n_split] = n_missing[k]
        threshold_bin[n_split] = np.int64(cut)
        n_split += 1
    if n_stats == TWO_CLASS_STATS:
        _add_left_rows(codes, partition, start, stop, stats, features, threshold_bin, n_split,
                       hist, TWO_CLASS_STATS)
    elif n_stats == SQUARED_ERROR_STATS:
        _add_left_rows(codes, partition, start, stop, stats, features, threshold_bin, n_split,
                       hist, SQUARED_ERROR_STATS)
    else:
        _add_left_rows(codes, partition, start, stop, stats, features, threshold_bin, n_split,
                       hist, n_stats)
    for k in range(n_split):
        for position in range(start, stop if n_missing[k] > 0 else start):
            row = partition[position]
            if codes[row, features[k]] == MISSING_BIN:
                _add_row(stats[row], hist[k, MISSING_BIN])
    parent_score = node_score(sums, n_stats, criterion, 0.0, 0.0)
    for k in range(n_split):
        left = hist[k, 0]
        if n_stats == TWO_CLASS_STATS and criterion != NEWTON:
            gain, missing_left = two_class_missing_side(
                left, hist[k, MISSING_BIN], sums, parent_score, criterion,
                params.min_samples_leaf, params.min_child_weight)
        else:
            gain, missing_left = best_missing_side(
                hist[k], sums, parent_score, criterion, 0.0, 0.0, params.min_samples_leaf,
                params.min_child_weight, left, work.right)
        if n_missing[k] == 0:
            missing_left = left[n_stats] >= sums[n_stats] - left[n_stats]  # _larger_side_is_left
        node_arrays.offer_split(node, gain, features[k], threshold_bin[k], missing_left,
                                tree.open_nodes)
        for channel in range(n_stats + 1):
            left[channel] = 0.0
            hist[k, MISSING_BIN, channel] = 0.0
    return n_scored


@njit(inline="always", nogil=True, _nrt=False)
def _add_left_rows(codes, partition, start, stop, stats, features, threshold_bin, n_split, hist,
                   n_stats):
    """hist[k, 0] += (the statistics, 1) of the rows partition[start:stop] with code <=
    threshold_bin[k] in column features[k], k < n_split (the left side of each cut, in slot
    k's bin 0). Inlined, so that a constant n_stats unrolls the channels: a loop over them
    for every row and feature cost its vector loop's set-up each time."""
    for position in range(start, stop):
        row = np.uint64(partition[position])  # unsigned indices: numba wraps negative ones
        for k in range(np.uint64(n_split)):
            # no branch: a row's side is a coin flip to predict; MISSING_BIN is above every cut
            goes_left = 1.0 if codes[row, np.uint64(features[k])] <= threshold_bin[k] else 0.0
            for channel in range(n_stats):
                hist[k, np.uint64(0), channel] += goes_left * stats[row, channel]
            hist[k, np.uint64(0), n_stats] += goes_left


@borrowing
def _add_row(row_stats, side):
    """side += (the row's statistics, 1): a histogram bin's sums, for one row."""
    n_stats = row_stats.shape[0]
    for channel in range(n_stats):
        side[channel] += row_stats[channel]
    side[n_stats] += 1.0


@borrowing
def _split_node(node, n_nodes, data, partition, scratch, tree):
    """Apply the node's best split: partition its rows, summing the left child's statistics,
    then record the split and its children (node_arrays.record_split)."""
    open_nodes, node_sums, category_bits = tree.open_nodes, tree.node_sums, tree.category_bits
    left_id = n_nodes
    right_id = n_nodes + 1
    n_left = partition_node(data.codes, open_nodes.best_feature[node], open_nodes.best_bin[node],
                            open_nodes.best_missing_left[node],
                            category_bits[min(node, category_bits.shape[0] - 1)], partition,
                            scratch, tree.nodes.node_start[node], tree.nodes.node_stop[node],
                            data.stats, node_sums[left_id])
    for channel in range(node_sums.shape[1]):
        node_sums[right_id, channel] = node_sums[node, channel] - node_sums[left_id, channel]
    node_arrays.record_split(node, n_nodes, tree.nodes, open_nodes, category_bits)
    node_arrays.place_children(node, n_left, tree.nodes)


@borrowing
def _feature_split(hist, n_occupied, n_bins, sums, params, work):
    """(gain, bin, missing_left) of one feature's best threshold, scanned with scalar sums for
    two classes (work: the node's CartScratch)."""
    criterion, min_samples_leaf, min_child_weight = (
        params.criterion, params.min_samples_leaf, params.min_child_weight)
    bins, left, right = work.bins, work.left, work.right
    n_stats = sums.shape[0] - 1
    if criterion != NEWTON and n_stats == 2:
        gain, split_bin, missing_left = best_two_class_threshold(
            hist, bins, n_occupied, n_bins, sums, criterion, min_samples_leaf,
            min_child_weight, work.scan)
    else:
        gain, split_bin, missing_left = best_threshold(hist, n_bins, sums, criterion, 0.0, 0.0,
                                                       min_samples_leaf, min_child_weight, left,
                                                       right)  # fmt: skip
    return gain, gap_midpoint(bins, n_occupied, split_bin), missing_left


@borrowing
def gap_midpoint(bins, n_occupied, split_bin):
    """CART's threshold (Breiman et al. 1984, as scikit-learn's trees): halfway between the
    largest value going left and the smallest going right, here in bin codes. With c the node's
    next occupied bin after split_bin b, the split becomes "code <= (b + c) // 2": the node's
    rows go where "code <= b" sent them, and the empty bins between b and c (values that the
    node's rows do not take, met by unseen rows) go half each way instead of all right. A split
    of the non-missing from the missing rows (no occupied bin after b) is kept."""
    for i in range(n_occupied):
        if bins[i] > split_bin:
            return (split_bin + bins[i]) // 2
    return split_bin

