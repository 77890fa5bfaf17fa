"""Growth of one gradient tree from (g, h) histograms: depth-wise or loss-guided.

Every open leaf holds a histogram (a slot of the pool) and its best split. Splitting a node
builds the histogram of the smaller child from its rows and gets the larger child's by
subtraction, hist(larger) = hist(parent) - hist(smaller), in the parent's slot.

- DEPTHWISE (XGBoost's default): open leaves are split in creation order, level by level.
- LOSSGUIDE (LightGBM's leaf-wise growth): the open leaf of largest gain is split next.
A split is made only if its gain exceeds min_split_gain (XGBoost's kRtEps) and is at least
gamma, the depth stays within max_depth and the leaves within max_leaves (0: no limit).
Gains and leaf weights are those of ensembles.engine.splitting (criterion NEWTON).
"""

import numpy as np
from numba import njit

from ensembles.engine.binning import MISSING_BIN, N_BIN_SLOTS
from ensembles.engine.histogram import (
    CHUNK_ROWS,
    MAX_CHUNKS,
    build_node_histogram,
    subtract_histogram,
    sum_node_stats,
)
from ensembles.engine.partition import partition_node, record_split
from ensembles.engine.splitting import NEWTON, best_newton_threshold, improves, leaf_value
from ensembles.engine.tree import LEAF

DEPTHWISE = 0
LOSSGUIDE = 1


@njit(cache=True)
def grow_gradient_tree(codes, columns, stats, rows, n_bins, features, grow_policy, max_depth,
                       max_leaves, reg_lambda, reg_alpha, gamma, min_child_weight,
                       min_samples_leaf, min_split_gain, node_feature_fraction, seed):
    """Grow one tree on stats = (g, h) per row (float64, C order) and uint8 codes, row-major
    (`codes`, for the histograms) and column-major (`columns`, the same codes, for the
    partitions).

    rows: int32 rows of this tree (after subsampling); features: sorted int32 columns it may
    use (after colsample_bytree); node_feature_fraction: colsample_bynode. Large nodes use
    numba's current threads (histogram.build_node_histogram, partition.partition_node); the
    tree does not depend on their number. A child's sums are those of its parent's histogram
    on the split side, as in the split scan.
    Returns (node arrays (see tree.Tree), partition, node_start): the rows of node i are
    partition[node_start[i]:node_start[i] + n_samples[i]], so the training rows' leaves are
    known without a prediction pass.
    """
    np.random.seed(seed)
    n_channels = stats.shape[1] + 1
    n_rows = rows.shape[0]
    n_used = features.shape[0]
    leaf_bound = max(n_rows, 1)
    if max_leaves > 0:
        leaf_bound = min(leaf_bound, max_leaves)
    if 0 < max_depth < 31:
        leaf_bound = min(leaf_bound, 2 ** max_depth)
    capacity = 2 * leaf_bound - 1

    feature = np.full(capacity, LEAF, dtype=np.int32)
    threshold_bin = np.zeros(capacity, dtype=np.int32)
    missing_left = np.zeros(capacity, dtype=np.bool_)
    left_child = np.full(capacity, LEAF, dtype=np.int32)
    right_child = np.full(capacity, LEAF, dtype=np.int32)
    gain = np.zeros(capacity)
    node_start = np.zeros(capacity, dtype=np.int32)
    node_stop = np.zeros(capacity, dtype=np.int32)
    node_depth = np.zeros(capacity, dtype=np.int32)
    node_sums = np.zeros((capacity, n_channels))
    node_slot = np.full(capacity, -1, dtype=np.int32)
    is_open = np.zeros(capacity, dtype=np.bool_)
    best_gain = np.full(capacity, -np.inf)
    best_feature = np.full(capacity, -1, dtype=np.int32)
    best_bin = np.zeros(capacity, dtype=np.int32)
    best_missing_left = np.zeros(capacity, dtype=np.bool_)

    pool = np.empty((leaf_bound, n_used, N_BIN_SLOTS, n_channels))  # each build zeroes its slot
    chunk_hists = np.empty((min(MAX_CHUNKS, (n_rows + CHUNK_ROWS - 1) // CHUNK_ROWS), n_used,
                            N_BIN_SLOTS, n_channels))
    free_slots = np.arange(pool.shape[0] - 1, -1, -1).astype(np.int32)
    n_free = pool.shape[0]
    partition = rows.copy()
    scratch = np.empty_like(partition)
    node_features = np.zeros(n_used, dtype=np.bool_)

    node_stop[0] = n_rows
    n_nodes = 1
    n_leaves = 1
    if _may_split(n_rows, 0, max_depth, min_samples_leaf):
        n_free -= 1
        node_slot[0] = free_slots[n_free]
        build_node_histogram(codes, partition, 0, n_rows, stats, features, pool[node_slot[0]],
                             chunk_hists)
        for b in range(N_BIN_SLOTS):
            node_sums[0] += pool[node_slot[0], 0, b]
        _find_best_split(pool[node_slot[0]], n_bins, features, node_sums[0], reg_lambda,
                         reg_alpha, min_child_weight, min_samples_leaf, node_feature_fraction,
                         node_features, 0, best_gain, best_feature, best_bin, best_missing_left)
        is_open[0] = True
    else:
        sum_node_stats(partition, 0, n_rows, stats, node_sums[0])

    cursor = 0
    while True:
        node = _next_open_node(is_open, best_gain, n_nodes, grow_policy, cursor)
        if node < 0:
            break
        cursor = node
        is_open[node] = False
        slot = node_slot[node]
        node_slot[node] = -1
        split_ok = (best_feature[node] >= 0 and best_gain[node] > min_split_gain
                    and best_gain[node] >= gamma and (max_leaves <= 0 or n_leaves < max_leaves))
        if not split_ok:
            free_slots[n_free] = slot
            n_free += 1
            continue

        start = node_start[node]
        stop = node_stop[node]
        n_left = partition_node(columns[:, best_feature[node]], best_bin[node],
                                best_missing_left[node], partition, scratch, start, stop)
        record_split(node, n_nodes, n_left, feature, threshold_bin, missing_left, left_child,
                     right_child, gain, node_start, node_stop, node_depth, best_gain,
                     best_feature, best_bin, best_missing_left)
        _left_sums(pool[slot, np.searchsorted(features, best_feature[node])], best_bin[node],
                   best_missing_left[node], node_sums[n_nodes])
        node_sums[n_nodes + 1] = node_sums[node] - node_sums[n_nodes]
        left_id = n_nodes
        right_id = n_nodes + 1
        n_nodes += 2
        n_leaves += 1

        child_depth = node_depth[node] + 1
        left_may = _may_split(n_left, child_depth, max_depth, min_samples_leaf)
        right_may = _may_split(stop - start - n_left, child_depth, max_depth, min_samples_leaf)
        if not (left_may or right_may):
            free_slots[n_free] = slot
            n_free += 1
            continue
        smaller, larger = (left_id, right_id) if n_left <= stop - start - n_left else \
            (right_id, left_id)
        n_free -= 1
        node_slot[smaller] = free_slots[n_free]
        node_slot[larger] = slot
        build_node_histogram(codes, partition, node_start[smaller], node_stop[smaller], stats,
                             features, pool[node_slot[smaller]], chunk_hists)
        subtract_histogram(pool[slot], pool[node_slot[smaller]])
        for child, child_may in ((left_id, left_may), (right_id, right_may)):
            if child_may:
                _find_best_split(pool[node_slot[child]], n_bins, features, node_sums[child],
                                 reg_lambda, reg_alpha, min_child_weight, min_samples_leaf,
                                 node_feature_fraction, node_features, child, best_gain,
                                 best_feature, best_bin, best_missing_left)
                is_open[child] = True
            else:
                free_slots[n_free] = node_slot[child]
                n_free += 1
                node_slot[child] = -1

    value = np.zeros((n_nodes, 1))
    for node in range(n_nodes):
        leaf_value(node_sums[node], 2, NEWTON, reg_lambda, reg_alpha, value[node])
    n_node_samples = (node_stop[:n_nodes] - node_start[:n_nodes]).astype(np.int32)
    arrays = (feature[:n_nodes].copy(), threshold_bin[:n_nodes].copy(),
              missing_left[:n_nodes].copy(), left_child[:n_nodes].copy(),
              right_child[:n_nodes].copy(), value, gain[:n_nodes].copy(), n_node_samples,
              node_sums[:n_nodes, 1].copy())
    return arrays, partition, node_start[:n_nodes].copy()


@njit(cache=True, nogil=True)
def _left_sums(hist, split_bin, missing_left, out):
    """out = the channel sums of a split's left child from the parent's histogram of the split
    feature: bins 0..split_bin, and the missing bin when missing values go left."""
    out[:] = 0.0
    for b in range(split_bin + 1):
        out += hist[b]
    if missing_left:
        out += hist[MISSING_BIN]


@njit(cache=True)
def _may_split(n_node_rows, depth, max_depth, min_samples_leaf):
    return (max_depth <= 0 or depth < max_depth) and n_node_rows >= 2 * max(min_samples_leaf, 1)


@njit(cache=True)
def _next_open_node(is_open, best_gain, n_nodes, grow_policy, cursor):
    """DEPTHWISE: the oldest open node; LOSSGUIDE: the open node of largest gain, the oldest
    on ties."""
    if grow_policy == DEPTHWISE:
        for node in range(cursor, n_nodes):
            if is_open[node]:
                return node
        return -1
    chosen = -1
    for node in range(n_nodes):
        if is_open[node] and (chosen < 0 or best_gain[node] > best_gain[chosen]):
            chosen = node
    return chosen


@njit(cache=True)
def _find_best_split(hist, n_bins, features, sums, reg_lambda, reg_alpha, min_child_weight,
                     min_samples_leaf, node_feature_fraction, node_features, node,
                     best_gain, best_feature, best_bin, best_missing_left):
    """Best (gain, feature, bin, missing side) of a node over its features, stored at `node`.

    Features are scanned in increasing index and a later one must `improve` on the best, so
    ties go to the smaller index, as in XGBoost. colsample_bynode draws the node's features
    first.
    """
    n_used = features.shape[0]
    node_features[:] = True
    if node_feature_fraction < 1.0:
        n_draw = max(1, int(node_feature_fraction * n_used))
        order = np.random.permutation(n_used)
        node_features[:] = False
        node_features[order[:n_draw]] = True
    best_gain[node] = -np.inf
    best_feature[node] = -1
    for k in range(n_used):
        if not node_features[k]:
            continue
        f = features[k]
        split_gain, split_bin, split_missing_left = best_newton_threshold(
            hist[k], n_bins[f], sums, reg_lambda, reg_alpha, min_samples_leaf, min_child_weight)
        if split_bin >= 0 and improves(split_gain, best_gain[node]):
            best_gain[node] = split_gain
            best_feature[node] = f
            best_bin[node] = split_bin
            best_missing_left[node] = split_missing_left
