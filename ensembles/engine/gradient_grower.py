"""Growth of one gradient tree from (g, h) histograms: depth-wise or loss-guided.

Every open leaf holds a histogram (a slot of the pool) and its best split. Splitting a node
builds the histogram of the smaller child from its rows and gets the larger child's by
subtraction, hist(larger) = hist(parent) - hist(smaller), in the parent's slot. The children's
sums come from the parent's histogram (the split scan's left side), their sizes from the
partition: the histograms hold no counts unless the split scans need them (needs_counts;
histogram's module docstring). Children of at most SMALL_NODE_ROWS rows each take no slot:
their scans sum each feature's histogram from their rows into a scratch of one feature and
read it at its occupied bins only (_find_best_row_split), and a split's left sums are summed
from its rows. A deep tree's nodes hold a few rows each, and a slot's 256 bins per feature to
zero, subtract and scan were two thirds of such a fit (docs/small_tables.md). Their sums are
those of a histogram built from the rows, where a subtracted one holds rounding residue in
its empty bins: a near tie may fall otherwise.

- DEPTHWISE (XGBoost's default): open leaves are split in creation order, level by level.
- LOSSGUIDE (LightGBM's leaf-wise growth): the open leaf of largest gain is split next.
A split is made only if its gain exceeds min_split_gain (XGBoost's kRtEps) and is at least
gamma, the depth stays within max_depth and the leaves within max_leaves (0: no limit).
Gains and leaf weights are those of ensembles.engine.splitting (criterion NEWTON).

Splits are decided one node at a time and then finished in batches: a whole level for
DEPTHWISE, one split for LOSSGUIDE. Finishing partitions the batch's rows (only counts the
rows going left of a split whose children cannot split), places the children and gives them
slots, builds and subtracts its histograms and scans its children; the partitions and the
histograms of a batch are each one pass of work items (row chunks of large nodes, whole
small nodes) that the threads take largest first. A batch whose histograms are too small
for that (a table of a few thousand rows: histogram.builds_serially) is shared by features
on two threads or more: each block of features builds its histograms and scans them in one
parallel region, and each child's features are offered in feature order after
(_grow_level_by_features; gbt_10k 0.485 -> 0.398 s, docs/small_tables.md). The draws of
colsample_bynode happen before, in node order, so the tree does not depend on the number
of threads.
"""

from typing import NamedTuple

import numpy as np
from numba import njit, prange

from ensembles.engine import node_arrays
from ensembles.engine.binning import MISSING_BIN, N_BIN_SLOTS
from ensembles.engine.borrowing import borrowing
from ensembles.engine.cart_histogram import clear_bins, list_set_bits
from ensembles.engine.categories import (
    CATEGORY_SET,
    SET_WORDS,
    best_newton_set,
    clear_set_scratch,
    empty_set_scratch,
    set_sums,
)
from ensembles.engine.histogram import (
    CHUNK_ROWS,
    COUNT_CHANNEL,
    COUNTED_CHANNELS,
    GRADIENT_CHANNEL,
    GRADIENT_CHANNELS,
    HESSIAN_CHANNEL,
    build_node_histograms,
    builds_serially,
    empty_chunk_histograms,
    empty_histograms,
    serial_node_histograms,
    sum_node_stats,
)
from ensembles.engine.partition import goes_left, partition_batch
from ensembles.engine.random_draws import DRAW_STATE_WORDS, seed_draws, shuffle_steps
from ensembles.engine.splitting import (
    NEWTON,
    best_newton_threshold,
    best_newton_threshold_at,
    leaf_value,
)
from ensembles.engine.tree import LEAF, add_leaf_values_by_partition, tree_fields
from ensembles.engine.work_queue import WORKERS, next_item

DEPTHWISE = 0
LOSSGUIDE = 1
INITIAL_SLOTS = 32  # histogram slots a fit starts with: the most open leaves of a depth-6 tree
MIN_SPLIT_ROWS = np.int64(2)  # XGBoost has no min_samples_split: only the rows of two children
SMALL_NODE_ROWS = 128  # children of at most this many rows are scanned from their rows
SET_WORDS_OF_BINS = N_BIN_SLOTS // 64  # the 64-bit words of a bitmap of bins
SERIAL_SCAN_BINS = 1 << 15  # bins x features a level's scans read without a parallel region
# (about 50 us on one thread): _scans_serially
SHARED_LEVEL_WORK = 1 << 14  # rows x features plus bins x features of a level shared by
# features (_shares_level)
BLOCK_BINS = 64  # a feature's weight in the blocks beyond its bins (_feature_blocks)


class GradientParams(NamedTuple):
    """How a gradient tree is grown (module docstring; XGBoost's names where it has one):
    grow_policy DEPTHWISE or LOSSGUIDE; max_depth and max_leaves, 0 for no limit;
    min_samples_leaf (LightGBM's min_child_samples); node_feature_fraction (colsample_bynode);
    the estimators' defaults are methods.boosting.TreeParams'; threads: numba's threads the
    fit runs on (threads.engine_threads), which decides whether a level too small to share
    by nodes is shared by features (_shares_level; the tree does not depend on it). Scalars
    only: a parallel loop (prange) takes a record of scalars, not one that nests another, so
    the set splits' categories.CategoryRegularization travels beside it."""

    grow_policy: int
    max_depth: int
    max_leaves: int
    reg_lambda: float
    reg_alpha: float
    gamma: float
    min_child_weight: float
    min_samples_leaf: int
    min_split_gain: float
    node_feature_fraction: float
    threads: int = 1

    def typed(self) -> "GradientParams":
        """The same parameters as the Python types of their fields: one record type, so
        numba compiles grow_gradient_tree once (a numpy integer or a float in an integer
        field would be another type)."""
        return GradientParams(*(kind(value) for kind, value in
                                zip(GradientParams.__annotations__.values(), self, strict=True)))


class SplitScratch(NamedTuple):
    """The scratch of one node's split scans (_find_best_split, _find_best_row_split):
    best_newton_threshold's bins (int32, N_BIN_SLOTS) and scan (float64, 8 x N_BIN_SLOTS),
    best_newton_set's set_scratch (categories.empty_set_scratch), and a small node's
    histogram of one feature (N_BIN_SLOTS x the pool's channels, zero between features), its
    occupied bins (int32) and their bitmap (uint64 words). Made once per tree for the scans
    on the calling thread, once per node in a parallel scan (split_scratch)."""

    bins: np.ndarray
    scan: np.ndarray
    set_scratch: tuple
    row_hist: np.ndarray
    row_bins: np.ndarray
    row_words: np.ndarray


class NodeSource(NamedTuple):
    """Where a node's split scan reads its statistics: its histogram, pool[node_slot[node]],
    or, for a node without a slot (node_slot -1: a child of at most SMALL_NODE_ROWS rows whose
    sibling is one too), its rows partition[node_start[node]:node_stop[node]], their codes
    (`columns`, column-major: columns[:, f]) and (g, h) (`stats`)."""

    columns: np.ndarray
    stats: np.ndarray
    partition: np.ndarray
    node_start: np.ndarray
    node_stop: np.ndarray
    pool: np.ndarray
    node_slot: np.ndarray


class LevelWork(NamedTuple):
    """A level's work shared by features (_grow_level_by_features): the nodes whose histograms
    are built from their rows (`smaller`, int64) and the slots their siblings' are subtracted
    in (`larger_slot`, int32, -1: none), the children to scan (int64), and the used features'
    blocks (int64): block b is features[blocks[b]:blocks[b + 1]]."""

    smaller: np.ndarray
    larger_slot: np.ndarray
    children: np.ndarray
    blocks: np.ndarray


class TreeDelivery(NamedTuple):
    """How grow_gradient_tree_fields delivers a boosting round's tree: its raw thresholds from
    the bin mapper's padded_edges, its leaf values times `scale` (the shrinkage), and out +=
    the leaf value of each training row: `out` has a row per row of the table and the tree is
    grown on all of them, or no row (the caller adds the tree)."""

    padded_edges: np.ndarray
    scale: float
    out: np.ndarray


class FeatureSplits(NamedTuple):
    """The best split of each used feature k at each child i of a shared level: gain[i, k]
    (float64), bin[i, k] (int64), missing_left[i, k] (bool), and a set split's set
    bits[i, k] (uint32 words; one unused entry when no feature is categorical)."""

    gain: np.ndarray
    bin: np.ndarray
    missing_left: np.ndarray
    bits: np.ndarray


@njit(cache=True)
def grow_gradient_tree(codes, columns, stats, rows, n_bins, categorical, features, params,
                       category_regularization, seed, workspace):
    """Grow one tree on stats = (g, h) per row (float32, C order) and uint8 codes, row-major
    (`codes`, for the histograms) and column-major (`columns`, the same codes, for the
    partitions), as `params` (GradientParams) says.

    rows: int32 rows of this tree (after subsampling), reordered in place into the partition;
    features: sorted int32 columns it may use (after colsample_bytree); categorical: bool per
    feature, True for a feature split on sets of categories (categories), regularized by
    category_regularization (a categories.CategoryRegularization). The work runs on
    numba's current threads; the tree does not depend on their number. workspace: the
    histogram buffers (gradient_workspace), reused by every tree of a fit.
    Returns (node arrays (see tree.Tree), partition, node_start, workspace): the workspace to
    pass to the next tree (its pool grown if this tree needed more slots); the rows of node i are
    partition[node_start[i]:node_start[i] + n_samples[i]], so the training rows' leaves are
    known without a prediction pass. A split whose children cannot split (the last level) does
    not partition its rows: its children's node_start is -1, and its own rows are routed by
    its split (tree.Tree.add_by_partition).
    """
    draw_state = np.empty(DRAW_STATE_WORDS, dtype=np.uint64)
    seed_draws(draw_state, seed)
    grow_policy, max_depth, max_leaves, min_samples_leaf, min_split_gain = (
        params.grow_policy, params.max_depth, params.max_leaves, params.min_samples_leaf,
        params.min_split_gain)
    node_feature_fraction = params.node_feature_fraction
    n_rows = rows.shape[0]
    n_used = features.shape[0]
    pool, chunk_pool = workspace
    if pool.shape[1] != n_used or chunk_pool.shape[0] < n_rows // CHUNK_ROWS:
        raise ValueError("the workspace was made for fewer rows or other features")
    if needs_counts(min_samples_leaf, categorical) and pool.shape[3] != COUNTED_CHANNELS:
        raise ValueError("the workspace was made without the counts this tree needs")
    n_channels = pool.shape[3]
    leaf_bound = node_arrays.max_leaf_count(n_rows, max_depth, max_leaves)
    capacity = 2 * leaf_bound - 1

    nodes = node_arrays.empty_nodes(capacity)
    open_nodes = node_arrays.empty_open_nodes(capacity)
    left_child, right_child, node_start, node_stop, node_depth = (
        nodes.left_child, nodes.right_child, nodes.node_start, nodes.node_stop, nodes.node_depth)
    is_open, best_gain, best_feature, best_bin, best_missing_left = open_nodes
    # per-node arrays are written as nodes are made (node_arrays.empty_nodes): deep trees on
    # many rows have room for millions of nodes and make thousands
    node_sums = np.empty((capacity, n_channels))
    node_sums[0] = 0.0
    node_slot = np.empty(capacity, dtype=np.int32)
    node_slot[0] = -1
    node_may_split = np.empty(capacity, dtype=np.bool_)
    usable = (np.empty((capacity, n_used), dtype=np.bool_) if node_feature_fraction < 1.0
              else np.ones((1, n_used), dtype=np.bool_))  # drawn for each node that may split
    feature_order = np.arange(n_used).astype(np.int32)  # _draw_features' running order
    blocks = _feature_blocks(features, n_bins, params.threads)
    category_bits = node_arrays.empty_category_sets(capacity, categorical)
    node_arrays.start_tree(nodes, open_nodes, category_bits)

    free_slots = _free_slot_stack(np.int64(0), pool.shape[0])  # typed: node_arrays
    scratch = split_scratch(n_channels, categorical)
    n_free = pool.shape[0]
    partition = rows
    partition_scratch = np.empty_like(partition)
    batch = np.empty(leaf_bound, dtype=np.int32)  # split nodes whose rows are not yet placed
    batch_slot = np.empty(leaf_bound, dtype=np.int32)  # their histogram slots
    batch_grows = np.empty(leaf_bound, dtype=np.bool_)  # may a child of theirs split?
    n_batch = 0

    node_stop[0] = n_rows
    n_nodes = np.int64(1)
    n_leaves = np.int64(1)
    if node_arrays.may_split(n_rows, node_depth[0], max_depth, MIN_SPLIT_ROWS, min_samples_leaf):
        pool, free_slots, n_free = _with_free_slot(pool, free_slots, n_free)
        n_free -= 1
        node_slot[0] = free_slots[n_free]
        build_node_histograms(codes, partition, stats, features, n_bins,
                              np.zeros(1, dtype=np.int64), node_start, node_stop, node_slot,
                              pool, chunk_pool, np.full(1, -1, dtype=np.int32))
        # the root's sums: the left sums of a split sending every used bin of a feature left
        # (typed as the splits' bin and side: a literal is another signature of _left_sums)
        n_first = n_bins[features[0]]
        _left_sums(pool[node_slot[0], 0], n_first, np.int32(n_first - 1), np.bool_(True),
                   category_bits[0], node_sums[0])
        _draw_features(usable[0], node_feature_fraction, feature_order, draw_state)
        _find_best_split(pool[node_slot[0]], n_bins, categorical, features, node_sums[0],
                         params, category_regularization, usable[0], node_arrays.ROOT,
                         open_nodes, category_bits, scratch)
        is_open[0] = True
    else:
        sum_node_stats(partition, np.int64(0), n_rows, stats, node_sums[0])

    cursor = node_arrays.ROOT
    while True:
        if grow_policy == LOSSGUIDE and n_batch > 0:
            node = -1  # finish the split before choosing the next leaf
        else:
            node = _next_open_node(open_nodes, n_nodes, grow_policy, cursor)
        if node < 0:
            if n_batch == 0:
                break
            split_nodes = batch[:n_batch]
            n_left = partition_batch(columns, split_nodes, batch_grows[:n_batch], nodes,
                                     category_bits, partition, partition_scratch)
            for t in range(n_batch):
                placed = _place_children(split_nodes[t], n_left[t], batch_grows[t],
                                         batch_slot[t], nodes, params, node_may_split,
                                         node_slot, free_slots, n_free)
                if placed < 0:  # the smaller child needs a slot and none is free
                    pool, free_slots, n_free = _with_free_slot(pool, free_slots, n_free)
                    placed = _place_children(split_nodes[t], n_left[t], batch_grows[t],
                                             batch_slot[t], nodes, params, node_may_split,
                                             node_slot, free_slots, n_free)
                n_free = placed
            parents = _parents_of_splittable(split_nodes, left_child, node_may_split)
            smaller, larger_slot = _histogram_pairs(parents, nodes, node_slot)
            children = _splittable_children(parents, left_child, node_may_split)
            for child in children:
                _draw_features(usable[min(child, usable.shape[0] - 1)], node_feature_fraction,
                               feature_order, draw_state)
            source = NodeSource(columns, stats, partition, node_start, node_stop, pool, node_slot)
            if _shares_level(params.threads, smaller, children, nodes, n_used):
                level = LevelWork(smaller, larger_slot, children, blocks)
                splits = _empty_feature_splits(children.shape[0], n_used, categorical)
                _grow_level_by_features(codes, source, n_bins, categorical, features,
                                        node_sums, params, category_regularization, usable,
                                        level, splits)
                _offer_feature_splits(children, features, categorical, usable, splits,
                                      open_nodes, category_bits)
            else:
                build_node_histograms(codes, partition, stats, features, n_bins, smaller,
                                      node_start, node_stop, node_slot, pool, chunk_pool,
                                      larger_slot)
                if _scans_serially(children, nodes, n_used):
                    _scan_children_serially(children, source, n_bins, categorical, features,
                                            node_sums, params, category_regularization,
                                            usable, open_nodes, category_bits, scratch)
                else:
                    _scan_children(children, source, n_bins, categorical, features,
                                   node_sums, params, category_regularization, usable,
                                   open_nodes, category_bits)
            is_open[children] = True
            for node in parents:
                for child in range(left_child[node], left_child[node] + 2):
                    if not node_may_split[child] and node_slot[child] >= 0:
                        free_slots[n_free] = node_slot[child]
                        n_free += 1
                        node_slot[child] = -1
            n_batch = 0
            continue
        cursor = node
        is_open[node] = False
        slot = node_slot[node]
        node_slot[node] = -1
        if not (node_arrays.admits_split(node, open_nodes, min_split_gain, n_leaves, max_leaves)
                and best_gain[node] >= params.gamma):
            if slot >= 0:
                free_slots[n_free] = slot
                n_free += 1
            continue

        left_id = n_nodes
        right_id = n_nodes + 1
        bits = category_bits[min(node, category_bits.shape[0] - 1)]
        if slot >= 0:
            _left_sums(pool[slot, np.searchsorted(features, best_feature[node])],
                       n_bins[best_feature[node]], best_bin[node], best_missing_left[node], bits,
                       node_sums[left_id])
        else:
            _left_sums_of_rows(columns[:, best_feature[node]], partition, node_start[node],
                               node_stop[node], stats, best_bin[node], best_missing_left[node],
                               bits, node_sums[left_id])
        for channel in range(n_channels):
            node_sums[right_id, channel] = node_sums[node, channel] - node_sums[left_id, channel]
        node_arrays.record_split(node, n_nodes, nodes, open_nodes, category_bits)
        n_nodes += 2
        n_leaves += 1
        node_slot[left_id] = node_slot[right_id] = -1
        node_may_split[left_id] = node_may_split[right_id] = False
        batch[n_batch] = node
        batch_slot[n_batch] = slot
        largest_child = node_stop[node] - node_start[node] - max(min_samples_leaf, 1)  # rows
        batch_grows[n_batch] = node_arrays.below_leaf_limit(
            n_leaves, max_leaves) and node_arrays.may_split(
            largest_child, node_depth[left_id], max_depth, MIN_SPLIT_ROWS, min_samples_leaf)
        n_batch += 1

    value = np.zeros((n_nodes, 1))
    for node in range(n_nodes):
        leaf_value(node_sums[node], GRADIENT_CHANNELS, NEWTON, params.reg_lambda,
                   params.reg_alpha, value[node])
    arrays = node_arrays.grown_tree(n_nodes, nodes, value, category_bits)
    rows_start = node_start[:n_nodes].copy()
    for node in range(n_nodes):
        left = left_child[node]
        if left != LEAF and not (node_may_split[left] or node_may_split[left + 1]):
            rows_start[left] = rows_start[right_child[node]] = -1
    return arrays, partition, rows_start, (pool, chunk_pool)


@njit(cache=True)
def grow_gradient_tree_fields(codes, columns, stats, rows, n_bins, categorical, features,
                              params, category_regularization, seed, workspace, delivery):
    """grow_gradient_tree, its tree delivered as `delivery` (a TreeDelivery) says: returned
    as tree.tree_fields, its leaf values times the shrinkage, and added to the raw scores of
    the training rows by its partition (tree.add_leaf_values_by_partition). One call from
    Python a boosting round instead of six (docs/small_tables.md)."""
    padded_edges, scale, out = delivery
    if out.shape[0] > 0 and not out.shape[0] == codes.shape[0] == rows.shape[0]:
        raise ValueError("a tree is added while grown only when grown on every row")
    arrays, partition, node_start, workspace = grow_gradient_tree(
        codes, columns, stats, rows, n_bins, categorical, features, params,
        category_regularization, seed, workspace)
    fields = tree_fields(arrays, n_bins, padded_edges)
    nodes, threshold, leaf_value, _, n_samples, category_bits, valid = fields
    leaf_value *= scale
    if valid and out.shape[0] > 0:
        add_leaf_values_by_partition(nodes, threshold, category_bits, leaf_value, partition,
                                     node_start, n_samples, columns, out)
    return fields, partition, node_start, workspace


@borrowing
def _place_children(node, n_left, grows, slot, nodes, params, node_may_split, node_slot,
                    free_slots, n_free):
    """After the partition of a batch, the rows of a split node's children, whether each may
    split, and their histogram slots: the parent's slot for the larger child and a free one
    for the smaller, when either may split and the larger has more than SMALL_NODE_ROWS
    rows; else the parent's slot (if any) freed, and the children scanned from their rows
    (_find_best_row_split). Returns the free slots left, or -1 when the smaller child needs
    a slot and none is free (nothing taken: the caller grows the pool, _with_free_slot, and
    places the children again). Borrows its arrays: it runs for every split."""
    node_arrays.place_children(np.int64(node), n_left, nodes)  # a node of an int32 batch
    node_start, node_stop = nodes.node_start, nodes.node_stop
    left = nodes.left_child[node]
    for child in range(left, left + 2):
        node_may_split[child] = grows and node_arrays.may_split(
            node_stop[child] - node_start[child], nodes.node_depth[child], params.max_depth,
            MIN_SPLIT_ROWS, params.min_samples_leaf)
    n_right = node_stop[left + 1] - node_start[left + 1]
    if not (node_may_split[left] or node_may_split[left + 1]) or max(n_left,
                                                                     n_right) <= SMALL_NODE_ROWS:
        if slot >= 0:  # a node without a slot has children of few rows: neither takes one
            free_slots[n_free] = slot
            n_free += 1
        return n_free
    if n_free == 0:
        return -1
    smaller, larger = (left, left + 1) if n_left <= n_right else (left + 1, left)
    node_slot[smaller] = free_slots[n_free - 1]
    node_slot[larger] = slot
    return n_free - 1


@njit(cache=True)
def gradient_workspace(n_rows, n_used, max_depth, max_leaves, min_samples_leaf, categorical):
    """The histogram buffers of growing trees of at most n_rows rows and n_used features:
    slots for the open leaves (a slot per possible leaf, at most INITIAL_SLOTS: the pool
    doubles when a tree needs more, _with_free_slot) and the chunk buffers, in the counted
    layout when the trees need counts (needs_counts). Allocated once per fit, and passed from
    tree to tree as grow_gradient_tree returns it: a fresh 4 MiB histogram per node of 500
    features was a page fault per 4 KiB (a third of a wide fit)."""
    n_slots = min(node_arrays.max_leaf_count(n_rows, max_depth, max_leaves), INITIAL_SLOTS)
    n_channels = (COUNTED_CHANNELS if needs_counts(min_samples_leaf, categorical)
                  else GRADIENT_CHANNELS)
    return (empty_histograms(n_slots, n_used, n_channels),
            empty_chunk_histograms(n_rows, n_used, n_channels))


@njit(cache=True, nogil=True)
def needs_counts(min_samples_leaf, categorical):
    """Whether the split scans need each bin's count (the counted histogram layout): for a
    minimum of rows per leaf above one, and for sets of categories (categories: the occupied
    categories are ordered)."""
    return min_samples_leaf > 1 or np.any(categorical)


@njit(cache=True)
def _with_free_slot(pool, free_slots, n_free):
    """(pool, free_slots, n_free) with at least one free slot: when every slot is taken, a
    pool twice as large holding the same slots, the new ones free. (A pool sized for every
    possible leaf was 185 GB for depth 20 on 800k rows; a deep tree's open leaves are few.)"""
    if n_free > 0:
        return pool, free_slots, n_free
    n_slots = pool.shape[0]
    grown = np.empty((2 * n_slots, pool.shape[1], pool.shape[2], pool.shape[3]))
    flat_grown, flat_pool = grown.reshape(-1), pool.reshape(-1)
    for i in range(flat_pool.shape[0]):  # a loop, not an array assignment: engine docstring
        flat_grown[i] = flat_pool[i]
    return grown, _free_slot_stack(n_slots, 2 * n_slots), n_slots


@njit(cache=True)
def _free_slot_stack(first, n_slots):
    """The stack of free slots of a pool of n_slots: slots first..n_slots-1 free, the lowest
    on top (taken first), room for every slot."""
    stack = np.empty(n_slots, dtype=np.int32)
    for i in range(n_slots - first):
        stack[i] = n_slots - 1 - i
    return stack


@borrowing
def _left_sums(hist, n_bins, split_bin, missing_left, bits, out):
    """out = the channel sums of a split's left child from the parent's histogram of the split
    feature (of n_bins bins): bins 0..split_bin, and the missing bin when missing values go
    left; for a set split, the used bins in the set."""
    if split_bin == CATEGORY_SET:
        set_sums(hist, n_bins, bits, out)
        return
    for channel in range(out.shape[0]):
        out[channel] = 0.0
        for b in range(split_bin + 1):
            out[channel] += hist[b, channel]
        if missing_left:
            out[channel] += hist[MISSING_BIN, channel]


@njit(cache=True)
def _next_open_node(open_nodes, n_nodes, grow_policy, cursor):
    """DEPTHWISE: the oldest open node; LOSSGUIDE: the open node of largest gain, the oldest
    on ties."""
    if grow_policy == DEPTHWISE:
        for node in range(cursor, n_nodes):
            if open_nodes.is_open[node]:
                return node
        return -1
    return node_arrays.largest_gain_open_node(open_nodes, n_nodes)


@borrowing
def _draw_features(usable, node_feature_fraction, feature_order, draw_state):
    """colsample_bynode: mark a random int(fraction * n_used) (at least 1) of the tree's
    features usable at a node, every subset of that size equally likely (the first of a
    uniformly random order: shuffle_steps on feature_order, a permutation of 0..n_used - 1
    that the tree's draws share); all of them when the fraction is 1."""
    if node_feature_fraction < 1.0:
        n_draw = max(1, int(node_feature_fraction * usable.shape[0]))
        shuffle_steps(feature_order, np.int64(0), np.int64(n_draw), draw_state)
        for k in range(usable.shape[0]):
            usable[k] = False
        for k in range(n_draw):
            usable[feature_order[k]] = True


@njit(cache=True, nogil=True)
def split_scratch(n_channels, categorical):
    """A SplitScratch for histograms of n_channels (set scans need the histogram's channels;
    one channel, unused, when no feature is categorical)."""
    return SplitScratch(np.empty(N_BIN_SLOTS, dtype=np.int32), np.empty((8, N_BIN_SLOTS)),
                        empty_set_scratch(n_channels if categorical.any() else 1),
                        np.zeros((N_BIN_SLOTS, n_channels)),
                        np.empty(N_BIN_SLOTS, dtype=np.int32),
                        np.empty(SET_WORDS_OF_BINS, dtype=np.uint64))


@borrowing
def _find_best_split(hist, n_bins, categorical, features, sums, params, category_regularization,
                     usable, node, open_nodes, category_bits, scratch):
    """Best (gain, feature, bin, missing side) of a node over its usable features, stored at
    `node` (a set split's set in category_bits[node]). Features are scanned in increasing
    index and a later one must `improve` on the best, so ties go to the smaller index, as in
    XGBoost. scratch: a SplitScratch (its set scratch zeroed here, as made)."""
    open_nodes.best_gain[node] = -np.inf
    open_nodes.best_feature[node] = -1
    if categorical.any():
        clear_set_scratch(scratch.set_scratch)
    for k in range(features.shape[0]):
        if usable[k]:
            _offer(node, features[k], _feature_split(hist[k], features[k], n_bins, categorical,
                                                     sums, params, category_regularization,
                                                     scratch),
                   categorical, scratch.set_scratch[3], open_nodes, category_bits)


@borrowing
def _find_best_row_split(source, n_bins, categorical, features, sums, params,
                         category_regularization, usable, node, open_nodes, category_bits,
                         scratch):
    """_find_best_split of a node without a histogram slot (NodeSource), from its rows
    (_row_feature_split)."""
    open_nodes.best_gain[node] = -np.inf
    open_nodes.best_feature[node] = -1
    if categorical.any():
        clear_set_scratch(scratch.set_scratch)
    for k in range(features.shape[0]):
        if usable[k]:
            _offer(node, features[k], _row_feature_split(node, source, features[k], n_bins,
                                                         categorical, sums, params,
                                                         category_regularization, scratch),
                   categorical, scratch.set_scratch[3], open_nodes, category_bits)


@njit(inline="always", nogil=True, _nrt=False)
def _offer(node, feature, split, categorical, candidate_bits, open_nodes, category_bits):
    """Offer the node a feature's best split = (gain, bin, missing_left)
    (node_arrays.offer_split; a categorical feature's set split with its set candidate_bits)."""
    gain, split_bin, missing_left = split
    if categorical[feature]:
        node_arrays.offer_set_split(node, gain, feature, missing_left, candidate_bits,
                                    open_nodes, category_bits)
    else:
        node_arrays.offer_split(node, gain, feature, split_bin, missing_left, open_nodes)


@njit(inline="always", nogil=True, _nrt=False)
def _feature_split(hist, feature, n_bins, categorical, sums, params, category_regularization,
                   scratch):
    """The best split of one feature from its histogram at a node of channel sums `sums`:
    (gain, bin, missing_left), gain -inf when none is admissible; a set split's bin is
    CATEGORY_SET, its set left in scratch.set_scratch[3] (categories.best_newton_set)."""
    if categorical[feature]:
        gain, missing_left = best_newton_set(
            hist, n_bins[feature], sums, params.reg_lambda, params.reg_alpha,
            params.min_samples_leaf, params.min_child_weight, category_regularization,
            scratch.set_scratch, scratch.bins, scratch.scan)
        return gain, CATEGORY_SET, missing_left
    gain, split_bin, missing_left = best_newton_threshold(
        hist, n_bins[feature], sums, params.reg_lambda, params.reg_alpha,
        params.min_samples_leaf, params.min_child_weight, scratch.bins, scratch.scan)
    return gain, np.int64(split_bin), missing_left


@njit(inline="always", nogil=True, _nrt=False)
def _row_feature_split(node, source, feature, n_bins, categorical, sums, params,
                       category_regularization, scratch):
    """_feature_split at a node without a histogram slot (NodeSource): the feature's histogram
    summed from the node's rows in scratch.row_hist (_row_histogram), scanned at its occupied
    bins only (splitting.best_newton_threshold_at) or for a set, then zeroed again. The same
    sums as a histogram built from the rows (in row order), without the 256 bins per feature
    of a slot to zero, subtract and scan: a deep tree's nodes hold a few rows each."""
    row_hist, row_bins = scratch.row_hist, scratch.row_bins
    n_occupied = _row_histogram(source.columns[:, feature], source.partition,
                                source.node_start[node], source.node_stop[node], source.stats,
                                row_hist, scratch.row_words, row_bins)
    if categorical[feature]:
        split = _feature_split(row_hist, feature, n_bins, categorical, sums, params,
                               category_regularization, scratch)
    else:
        gain, split_bin, missing_left = best_newton_threshold_at(
            row_hist, row_bins, n_occupied, n_bins[feature], sums, params.reg_lambda,
            params.reg_alpha, params.min_samples_leaf, params.min_child_weight, scratch.scan)
        split = (gain, np.int64(split_bin), missing_left)
    clear_bins(row_hist, row_bins, n_occupied)
    return split


@borrowing
def _row_histogram(column, rows, start, stop, stats, hist, words, bins):
    """hist = the (g, h) or (g, h, count, 0) histogram of one feature's codes `column` over
    rows[start:stop], summed in row order into a zero hist; bins[:m] = its occupied
    non-missing bins, increasing (from a bitmap of them, `words`); returns m."""
    counted = hist.shape[1] > COUNT_CHANNEL
    for w in range(SET_WORDS_OF_BINS):
        words[w] = 0
    for position in range(start, stop):
        row = rows[position]
        code = np.int64(column[row])
        hist[code, GRADIENT_CHANNEL] += stats[row, GRADIENT_CHANNEL]
        hist[code, HESSIAN_CHANNEL] += stats[row, HESSIAN_CHANNEL]
        if counted:
            hist[code, COUNT_CHANNEL] += 1.0
        if code != MISSING_BIN:
            words[code >> 6] |= np.uint64(1) << np.uint64(code & 63)
    n_occupied = np.int64(0)  # typed: a literal 0 is another signature of list_set_bits
    for w in range(SET_WORDS_OF_BINS):
        n_occupied = list_set_bits(words[w], np.int64(64 * w), bins, n_occupied)
    return n_occupied


@borrowing
def _left_sums_of_rows(column, rows, start, stop, stats, split_bin, missing_left, bits, out):
    """_left_sums of a node without a histogram: the (g, h[, count, 0]) sums of its rows
    rows[start:stop] that the split sends left (partition.goes_left on the split feature's
    codes `column`), in row order."""
    out[:] = 0.0
    for position in range(start, stop):
        row = rows[position]
        if goes_left(column[row], split_bin, missing_left, bits):
            out[GRADIENT_CHANNEL] += stats[row, GRADIENT_CHANNEL]
            out[HESSIAN_CHANNEL] += stats[row, HESSIAN_CHANNEL]
            if out.shape[0] > COUNT_CHANNEL:
                out[COUNT_CHANNEL] += 1.0


@njit(inline="always", nogil=True)
def _scan_node(node, source, n_bins, categorical, features, sums, params,
               category_regularization, usable, open_nodes, category_bits, scratch):
    """The node's best split, from its histogram slot or, without one, from its rows."""
    slot = source.node_slot[node]
    if slot >= 0:
        _find_best_split(source.pool[slot], n_bins, categorical, features, sums, params,
                         category_regularization, usable, node, open_nodes, category_bits,
                         scratch)
    else:
        _find_best_row_split(source, n_bins, categorical, features, sums, params,
                             category_regularization, usable, node, open_nodes, category_bits,
                             scratch)


@njit(cache=True)
def _histogram_pairs(split_nodes, nodes, node_slot):
    """For every split node of a batch whose children hold slots: its smaller child, whose
    histogram is built from its rows, and the larger's slot (the parent's), where it is
    subtracted: hist(larger) = hist(parent) - hist(smaller) (histogram.build_node_histograms'
    nodes and sibling_slot)."""
    node_start, node_stop = nodes.node_start, nodes.node_stop
    n_batch = split_nodes.shape[0]
    smaller = np.empty(n_batch, dtype=np.int64)
    larger_slot = np.empty(n_batch, dtype=np.int32)
    n_pairs = 0
    for t in range(n_batch):
        left = nodes.left_child[split_nodes[t]]
        if node_slot[left] >= 0:
            n_left = node_stop[left] - node_start[left]
            n_right = node_stop[left + 1] - node_start[left + 1]
            smaller[n_pairs], larger = ((left, left + 1) if n_left <= n_right
                                        else (left + 1, left))
            larger_slot[n_pairs] = node_slot[larger]
            n_pairs += 1
    return smaller[:n_pairs], larger_slot[:n_pairs]


@njit(cache=True)
def _parents_of_splittable(nodes, left_child, node_may_split):
    """The split nodes of a batch with a child that may split: only their rows are
    partitioned (the others' children are final leaves, and their rows stay in place)."""
    parents = np.empty(nodes.shape[0], dtype=nodes.dtype)
    n_parents = 0
    for node in nodes:
        if node_may_split[left_child[node]] or node_may_split[left_child[node] + 1]:
            parents[n_parents] = node
            n_parents += 1
    return parents[:n_parents]


@njit(cache=True)
def _splittable_children(nodes, left_child, node_may_split):
    """The children of a batch's split nodes that may split, in node order."""
    children = np.empty(2 * nodes.shape[0], dtype=np.int64)
    n_children = 0
    for node in nodes:
        for child in range(left_child[node], left_child[node] + 2):
            if node_may_split[child]:
                children[n_children] = child
                n_children += 1
    return children[:n_children]


@njit(cache=True)
def _scans_serially(children, nodes, n_used):
    """Whether a level's children are scanned on the calling thread: when their scans read
    fewer than SERIAL_SCAN_BINS bins x features (a child of r rows has at most min(r,
    N_BIN_SLOTS) occupied bins per feature), less than a parallel region costs on a busy
    machine (histogram.build_node_histograms)."""
    work = 0
    for child in children:
        work += min(nodes.node_stop[child] - nodes.node_start[child], N_BIN_SLOTS) * n_used
    return work < SERIAL_SCAN_BINS


@borrowing
def _scan_children_serially(children, source, n_bins, categorical, features, node_sums,
                            params, category_regularization, usable, open_nodes,
                            category_bits, scratch):
    """_scan_node of every child on the calling thread. A borrowing kernel: inlined into
    the grower, the arrays _scan_node reads from its records cost 54 reference-count calls a
    child (counted with gdb); without them `gbt_2k` fits in 0.95x the time."""
    for child in children:
        _scan_node(child, source, n_bins, categorical, features, node_sums[child], params,
                   category_regularization, usable[min(child, usable.shape[0] - 1)],
                   open_nodes, category_bits, scratch)


@njit(cache=True, parallel=True)
def _scan_children(children, source, n_bins, categorical, features, node_sums, params,
                   category_regularization, usable, open_nodes, category_bits):
    """_scan_node of every child, the threads taking the next child from a shared queue
    (work_queue), each with a scratch of its own made when it takes its first child, not one
    per child (six arrays since small nodes have theirs: a scratch per child, with a call of
    _scan_node that was not inlined, made gbt_10k 3-6% slower, measured)."""
    n_channels = source.pool.shape[3]
    n_children = children.shape[0]
    counter = np.zeros(1, dtype=np.int64)
    for _ in prange(WORKERS):
        t = next_item(counter)
        if t < n_children:
            scratch = split_scratch(n_channels, categorical)
            while t < n_children:
                child = children[t]
                _scan_node(child, source, n_bins, categorical, features, node_sums[child],
                           params, category_regularization,
                           usable[min(child, usable.shape[0] - 1)], open_nodes, category_bits,
                           scratch)
                t = next_item(counter)


@njit(cache=True)
def _shares_level(threads, smaller, children, nodes, n_used):
    """Whether a level is shared by features (_grow_level_by_features): on two threads or
    more, when its histograms would be built on the calling thread (histogram.builds_serially)
    and its work, the rows x features of those histograms and the bins x features of its
    scans (_scans_serially), is at least SHARED_LEVEL_WORK."""
    if threads < 2 or not builds_serially(smaller, nodes.node_start, nodes.node_stop, n_used):
        return False
    work = 0
    for node in smaller:
        work += nodes.node_stop[node] - nodes.node_start[node]
    for child in children:
        work += min(nodes.node_stop[child] - nodes.node_start[child], N_BIN_SLOTS)
    return work * n_used >= SHARED_LEVEL_WORK


@njit(cache=True)
def _feature_blocks(features, n_bins, n_blocks):
    """The bounds of n_blocks contiguous blocks of the used features (at most one a feature),
    of about equal weight, a feature's weight its bins plus BLOCK_BINS (its scan and its part
    of a histogram pass): block b is features[blocks[b]:blocks[b + 1]]."""
    n_used = features.shape[0]
    n_blocks = max(1, min(n_blocks, n_used))
    weight = np.empty(n_used + 1, dtype=np.int64)
    weight[0] = 0
    for k in range(n_used):
        weight[k + 1] = weight[k] + n_bins[features[k]] + BLOCK_BINS
    blocks = np.empty(n_blocks + 1, dtype=np.int64)
    blocks[0] = 0
    blocks[n_blocks] = n_used
    k = 0
    for b in range(1, n_blocks):
        while k < n_used - (n_blocks - b) and weight[k] * n_blocks < weight[n_used] * b:
            k += 1
        blocks[b] = max(k, blocks[b - 1] + 1)
        k = blocks[b]
    return blocks


@njit(cache=True)
def _empty_feature_splits(n_children, n_used, categorical):
    """FeatureSplits of n_children children, unset (each block writes its usable features)."""
    n_set_rows = n_children if categorical.any() else 1
    return FeatureSplits(np.empty((n_children, n_used)),
                         np.empty((n_children, n_used), dtype=np.int64),
                         np.empty((n_children, n_used), dtype=np.bool_),
                         np.empty((n_set_rows, n_used if n_set_rows == n_children else 1,
                                   SET_WORDS), dtype=np.uint32))


@njit(cache=True, parallel=True)
def _grow_level_by_features(codes, source, n_bins, categorical, features, node_sums, params,
                            category_regularization, usable, level, splits):
    """A level's histograms and scans in one parallel region split by features, for a level
    whose nodes are too few or too small to share (its histograms below
    histogram.SERIAL_WORK): each block of features (LevelWork.blocks) is a work item, taken
    from a shared queue (work_queue), that builds the block's histograms of level.smaller,
    subtracts them from their siblings' (histogram.serial_node_histograms) and scans the
    block's features at every child (_scan_block) into `splits`. One launch and one wait a
    level instead of the calling thread alone; _offer_feature_splits then offers each child
    its features' splits in feature order, so the tree is the one grown on one thread."""
    n_channels = source.pool.shape[3]
    n_blocks = level.blocks.shape[0] - 1
    counter = np.zeros(1, dtype=np.int64)
    for _ in prange(WORKERS):
        b = next_item(counter)
        if b < n_blocks:
            scratch = split_scratch(n_channels, categorical)
            while b < n_blocks:
                feature_range = (level.blocks[b], level.blocks[b + 1])
                serial_node_histograms(codes, source.partition, source.stats, features, n_bins,
                                       level.smaller, source.node_start, source.node_stop,
                                       source.node_slot, source.pool, level.larger_slot,
                                       feature_range)
                _scan_block(level.children, source, n_bins, categorical, features, node_sums,
                            params, category_regularization, usable, feature_range, splits,
                            scratch)
                b = next_item(counter)


@borrowing
def _scan_block(children, source, n_bins, categorical, features, node_sums, params,
                category_regularization, usable, feature_range, splits, scratch):
    """splits[i, k] = the best split of used feature k in feature_range = (first, stop) at
    children[i] (_feature_split, or _row_feature_split at a child without a slot), for the
    features usable there."""
    first, stop = feature_range
    with_sets = categorical.any()
    for i in range(children.shape[0]):
        node = children[i]
        node_usable = usable[min(node, usable.shape[0] - 1)]
        slot = source.node_slot[node]
        if with_sets:
            clear_set_scratch(scratch.set_scratch)
        for k in range(first, stop):
            if not node_usable[k]:
                continue
            if slot >= 0:
                split = _feature_split(source.pool[slot, k], features[k], n_bins, categorical,
                                       node_sums[node], params, category_regularization,
                                       scratch)
            else:
                split = _row_feature_split(node, source, features[k], n_bins, categorical,
                                           node_sums[node], params, category_regularization,
                                           scratch)
            splits.gain[i, k], splits.bin[i, k], splits.missing_left[i, k] = split
            if categorical[features[k]]:
                candidate_bits = scratch.set_scratch[3]
                for word in range(candidate_bits.shape[0]):
                    splits.bits[i, k, word] = candidate_bits[word]


@borrowing
def _offer_feature_splits(children, features, categorical, usable, splits, open_nodes,
                          category_bits):
    """Each child's best split from its usable features' splits (_scan_block), offered in
    feature order as _find_best_split offers them (_offer): the same split, ties and all."""
    for i in range(children.shape[0]):
        node = children[i]
        node_usable = usable[min(node, usable.shape[0] - 1)]
        open_nodes.best_gain[node] = -np.inf
        open_nodes.best_feature[node] = -1
        for k in range(features.shape[0]):
            if node_usable[k]:
                _offer(node, features[k],
                       (splits.gain[i, k], splits.bin[i, k], splits.missing_left[i, k]),
                       categorical, splits.bits[min(i, splits.bits.shape[0] - 1),
                                   min(k, splits.bits.shape[1] - 1)],
                       open_nodes, category_bits)
