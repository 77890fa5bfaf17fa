"""Depth-first growth of one tree on binned data, the nodes kept in flat arrays.

The node's rows are a slice rows[start:stop] of one partition array that each split reorders
in place (left rows first). At each node the candidate features are visited in a random
order, one histogram per feature, until `max_features` non-constant features were scored
(features constant in the node do not count, as in scikit-learn's CART).
"""

import numpy as np
from numba import njit

from ensembles.engine.binning import MISSING_BIN, N_BIN_SLOTS
from ensembles.engine.histogram import build_feature_histogram, sum_node_stats
from ensembles.engine.partition import partition_rows
from ensembles.engine.splitting import NEWTON, best_threshold, leaf_value, node_impurity
from ensembles.engine.tree import LEAF

PURE_IMPURITY = 1e-12


@njit(cache=True, nogil=True)
def grow_depth_first(codes, stats, rows, n_bins, criterion, max_depth, min_samples_split,
                     min_samples_leaf, min_child_weight, reg_lambda, reg_alpha, min_split_gain,
                     max_features, seed):
    """Grow one tree; returns its node arrays (see ensembles.engine.tree.Tree).

    codes: uint8 (n_samples, n_features); stats: float64 (n_samples, n_stats) per-sample
    statistics; rows: int32 indices of the rows to use (bootstrap: rows with weight > 0).
    A node becomes a leaf at max_depth, below min_samples_split rows, when pure, or when no
    admissible split has gain > min_split_gain.
    """
    np.random.seed(seed)
    n_features = codes.shape[1]
    n_stats = stats.shape[1]
    n_outputs = 1 if criterion == NEWTON else n_stats
    n_rows = rows.shape[0]
    capacity = 2 * n_rows + 1
    if max_depth >= 0 and max_depth < 30:
        capacity = min(capacity, 2 ** (max_depth + 1))

    feature = np.full(capacity, LEAF, dtype=np.int32)
    threshold_bin = np.zeros(capacity, dtype=np.int32)
    missing_left = np.zeros(capacity, dtype=np.bool_)
    left_child = np.full(capacity, LEAF, dtype=np.int32)
    right_child = np.full(capacity, LEAF, dtype=np.int32)
    value = np.zeros((capacity, n_outputs))
    gain = np.zeros(capacity)
    n_node_samples = np.zeros(capacity, dtype=np.int32)
    node_sums = np.zeros((capacity, n_stats + 1))

    partition = rows.copy()
    scratch = np.empty_like(partition)
    hist = np.zeros((N_BIN_SLOTS, n_stats + 1))
    left_scratch = np.zeros(n_stats + 1)
    right_scratch = np.zeros(n_stats + 1)
    feature_order = np.arange(n_features)

    stack_node = np.zeros(capacity, dtype=np.int32)
    stack_start = np.zeros(capacity, dtype=np.int32)
    stack_stop = np.zeros(capacity, dtype=np.int32)
    stack_depth = np.zeros(capacity, dtype=np.int32)
    stack_size = 1
    stack_stop[0] = n_rows
    sum_node_stats(partition, 0, n_rows, stats, node_sums[0])
    n_nodes = 1

    while stack_size > 0:
        stack_size -= 1
        node = stack_node[stack_size]
        start = stack_start[stack_size]
        stop = stack_stop[stack_size]
        depth = stack_depth[stack_size]
        sums = node_sums[node]
        n_node = stop - start
        n_node_samples[node] = n_node
        leaf_value(sums, n_stats, criterion, reg_lambda, reg_alpha, value[node])

        if ((max_depth >= 0 and depth >= max_depth) or n_node < min_samples_split
                or n_node < 2 * min_samples_leaf
                or node_impurity(sums, n_stats, criterion) <= PURE_IMPURITY):
            continue

        best_gain = -np.inf
        best_feature = -1
        best_bin = -1
        best_missing_left = False
        n_scored = 0
        for i in range(n_features):
            j = i + np.random.randint(n_features - i)
            f = feature_order[j]
            feature_order[j] = feature_order[i]
            feature_order[i] = f
            build_feature_histogram(codes[:, f], partition, start, stop, stats, hist)
            if _is_constant(hist, n_bins[f], n_stats, n_node):
                continue
            split_gain, split_bin, split_missing_left = best_threshold(
                hist, n_bins[f], sums, criterion, reg_lambda, reg_alpha, min_samples_leaf,
                min_child_weight, left_scratch, right_scratch)
            if split_gain > best_gain:
                best_gain = split_gain
                best_feature = f
                best_bin = split_bin
                best_missing_left = split_missing_left
            n_scored += 1
            if n_scored >= max_features:
                break

        if best_feature < 0 or not best_gain > min_split_gain:
            continue

        n_left = partition_rows(codes[:, best_feature], partition, scratch, start, stop,
                                 best_bin, best_missing_left)
        left_id = n_nodes
        right_id = n_nodes + 1
        n_nodes += 2
        feature[node] = best_feature
        threshold_bin[node] = best_bin
        missing_left[node] = best_missing_left
        left_child[node] = left_id
        right_child[node] = right_id
        gain[node] = best_gain
        sum_node_stats(partition, start, start + n_left, stats, node_sums[left_id])
        for c in range(n_stats + 1):
            node_sums[right_id, c] = sums[c] - node_sums[left_id, c]

        middle = start + n_left
        stack_node[stack_size], stack_node[stack_size + 1] = right_id, left_id
        stack_start[stack_size], stack_start[stack_size + 1] = middle, start
        stack_stop[stack_size], stack_stop[stack_size + 1] = stop, middle
        stack_depth[stack_size] = stack_depth[stack_size + 1] = depth + 1
        stack_size += 2

    hessian_or_weight = node_sums[:n_nodes, 1] if criterion == NEWTON else \
        node_sums[:n_nodes, :n_stats].sum(axis=1)
    return (feature[:n_nodes].copy(), threshold_bin[:n_nodes].copy(),
            missing_left[:n_nodes].copy(), left_child[:n_nodes].copy(),
            right_child[:n_nodes].copy(), value[:n_nodes].copy(), gain[:n_nodes].copy(),
            n_node_samples[:n_nodes].copy(), hessian_or_weight.copy())


@njit(cache=True, nogil=True)
def _is_constant(hist, n_bins, n_stats, n_node):
    """True when every node row falls in a single bin (the missing bin included)."""
    if hist[MISSING_BIN, n_stats] == n_node:
        return True
    for b in range(n_bins):
        if hist[b, n_stats] > 0.0:
            return hist[b, n_stats] == n_node
    return True
