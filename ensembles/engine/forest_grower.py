"""Growth of one CART tree on binned data: random features per node, best or random thresholds.

The node's rows are a slice of one partition array that each split reorders in place (left rows
first). A node's best split is found when the node is created: its candidate features are
visited in a random order, one histogram per feature, until `max_features` non-constant
features were scored (features constant in the node do not count, as in scikit-learn's CART).
Nodes are then split depth first, or, with max_leaf_nodes > 0, best first (largest gain).
"""

import numpy as np
from numba import njit

from ensembles.engine.binning import MISSING_BIN, N_BIN_SLOTS
from ensembles.engine.histogram import build_feature_histogram, sum_node_stats
from ensembles.engine.partition import split_node
from ensembles.engine.splitting import (
    NEWTON,
    best_threshold,
    improves,
    leaf_value,
    node_impurity,
    random_threshold,
)
from ensembles.engine.tree import LEAF

PURE_IMPURITY = 1e-12


@njit(cache=True, nogil=True)
def grow_cart_tree(codes, stats, rows, n_bins, bin_upper_values, criterion, max_depth,
                   max_leaf_nodes, min_samples_split, min_samples_leaf, min_child_weight,
                   min_split_gain, max_features, random_splits, seed):
    """Grow one tree; returns its node arrays (see ensembles.engine.tree.Tree).

    codes: uint8 (n_samples, n_features); stats: float64 (n_samples, n_stats) per-sample
    statistics; rows: int32 rows to use (with bootstrap, the rows drawn at least once).
    max_depth < 0 and max_leaf_nodes <= 0 mean no limit. A node is a leaf at max_depth, below
    min_samples_split rows, when pure, or when no admissible split gains more than
    min_split_gain. random_splits: one random threshold per feature (extra trees).
    """
    np.random.seed(seed)
    n_features = codes.shape[1]
    n_stats = stats.shape[1]
    n_outputs = 1 if criterion == NEWTON else n_stats
    n_rows = rows.shape[0]
    capacity = 2 * n_rows + 1
    if 0 <= max_depth < 30:
        capacity = min(capacity, 2 ** (max_depth + 1))
    if max_leaf_nodes > 0:
        capacity = min(capacity, 2 * max_leaf_nodes)

    feature = np.full(capacity, LEAF, dtype=np.int32)
    threshold_bin = np.zeros(capacity, dtype=np.int32)
    missing_left = np.zeros(capacity, dtype=np.bool_)
    left_child = np.full(capacity, LEAF, dtype=np.int32)
    right_child = np.full(capacity, LEAF, dtype=np.int32)
    value = np.zeros((capacity, n_outputs))
    gain = np.zeros(capacity)
    node_start = np.zeros(capacity, dtype=np.int32)
    node_stop = np.zeros(capacity, dtype=np.int32)
    node_depth = np.zeros(capacity, dtype=np.int32)
    node_sums = np.zeros((capacity, n_stats + 1))
    best_gain = np.full(capacity, -np.inf)
    best_feature = np.full(capacity, -1, dtype=np.int32)
    best_bin = np.zeros(capacity, dtype=np.int32)
    best_missing_left = np.zeros(capacity, dtype=np.bool_)
    is_open = np.zeros(capacity, dtype=np.bool_)
    stack = np.zeros(capacity, dtype=np.int32)

    partition = rows.copy()
    scratch = np.empty_like(partition)
    hist = np.zeros((N_BIN_SLOTS, n_stats + 1))
    left_scratch = np.zeros(n_stats + 1)
    right_scratch = np.zeros(n_stats + 1)
    feature_order = np.arange(n_features)

    node_stop[0] = n_rows
    sum_node_stats(partition, 0, n_rows, stats, node_sums[0])
    n_nodes = 1
    n_leaves = 1
    stack_size = 0
    if _evaluate_node(0, codes, stats, partition, n_bins, bin_upper_values, criterion,
                      max_depth, min_samples_split, min_samples_leaf, min_child_weight,
                      max_features, random_splits, node_start, node_stop, node_depth,
                      node_sums, value, best_gain, best_feature, best_bin, best_missing_left,
                      hist, left_scratch, right_scratch, feature_order):
        is_open[0] = True
        stack[0] = 0
        stack_size = 1

    while True:
        if max_leaf_nodes > 0:
            node = _largest_gain_open_node(is_open, best_gain, n_nodes)
        else:
            node = -1
            if stack_size > 0:
                stack_size -= 1
                node = stack[stack_size]
        if node < 0:
            break
        is_open[node] = False
        if not best_gain[node] > min_split_gain or (0 < max_leaf_nodes <= n_leaves):
            continue

        split_node(node, n_nodes, codes, partition, scratch, stats, feature, threshold_bin,
                   missing_left, left_child, right_child, gain, node_start, node_stop,
                   node_depth, node_sums, best_gain, best_feature, best_bin, best_missing_left)
        left_id = n_nodes
        right_id = n_nodes + 1
        n_nodes += 2
        n_leaves += 1
        for child in (right_id, left_id):
            if _evaluate_node(child, codes, stats, partition, n_bins, bin_upper_values,
                              criterion, max_depth, min_samples_split, min_samples_leaf,
                              min_child_weight, max_features, random_splits, node_start,
                              node_stop, node_depth, node_sums, value, best_gain, best_feature,
                              best_bin, best_missing_left, hist, left_scratch, right_scratch,
                              feature_order):
                is_open[child] = True
                stack[stack_size] = child
                stack_size += 1

    weight = node_sums[:n_nodes, 1] if criterion == NEWTON else \
        node_sums[:n_nodes, :n_stats].sum(axis=1)
    n_node_samples = (node_stop[:n_nodes] - node_start[:n_nodes]).astype(np.int32)
    return (feature[:n_nodes].copy(), threshold_bin[:n_nodes].copy(),
            missing_left[:n_nodes].copy(), left_child[:n_nodes].copy(),
            right_child[:n_nodes].copy(), value[:n_nodes].copy(), gain[:n_nodes].copy(),
            n_node_samples, weight.copy())


@njit(cache=True, nogil=True)
def _evaluate_node(node, codes, stats, partition, n_bins, bin_upper_values, criterion,
                   max_depth, min_samples_split, min_samples_leaf, min_child_weight,
                   max_features, random_splits, node_start, node_stop, node_depth, node_sums,
                   value, best_gain, best_feature, best_bin, best_missing_left, hist, left,
                   right, feature_order):
    """Set the node's leaf value and best split; True when the node may be split."""
    n_stats = stats.shape[1]
    n_features = codes.shape[1]
    start = node_start[node]
    stop = node_stop[node]
    n_node = stop - start
    sums = node_sums[node]
    leaf_value(sums, n_stats, criterion, 0.0, 0.0, value[node])
    if ((0 <= max_depth <= node_depth[node]) or n_node < min_samples_split
            or n_node < 2 * min_samples_leaf
            or node_impurity(sums, n_stats, criterion) <= PURE_IMPURITY):
        return False
    n_scored = 0
    for i in range(n_features):
        j = i + np.random.randint(n_features - i)
        f = feature_order[j]
        feature_order[j] = feature_order[i]
        feature_order[i] = f
        build_feature_histogram(codes[:, f], partition, start, stop, stats, hist)
        if _is_constant(hist, n_bins[f], n_stats, n_node):
            continue
        if random_splits:
            split_gain, split_bin, split_missing_left = random_threshold(
                hist, n_bins[f], bin_upper_values[f], sums, criterion, 0.0, 0.0,
                min_samples_leaf, min_child_weight, left, right)
        else:
            split_gain, split_bin, split_missing_left = best_threshold(
                hist, n_bins[f], sums, criterion, 0.0, 0.0, min_samples_leaf,
                min_child_weight, left, right)
        if split_bin >= 0 and improves(split_gain, best_gain[node]):
            best_gain[node] = split_gain
            best_feature[node] = f
            best_bin[node] = split_bin
            best_missing_left[node] = split_missing_left
        n_scored += 1
        if n_scored >= max_features:
            break
    return best_feature[node] >= 0


@njit(cache=True, nogil=True)
def _largest_gain_open_node(is_open, best_gain, n_nodes):
    """The open node of largest gain, the oldest on ties; -1 when none is open."""
    chosen = -1
    for node in range(n_nodes):
        if is_open[node] and (chosen < 0 or best_gain[node] > best_gain[chosen]):
            chosen = node
    return chosen


@njit(cache=True, nogil=True)
def _is_constant(hist, n_bins, n_stats, n_node):
    """True when every node row falls in a single bin (the missing bin included)."""
    if hist[MISSING_BIN, n_stats] == n_node:
        return True
    for b in range(n_bins):
        if hist[b, n_stats] > 0.0:
            return hist[b, n_stats] == n_node
    return True
