"""Growth of one CART tree on binned data: random features per node, best or random thresholds.

The node's rows are a slice of one partition array that each split reorders in place (left rows
first). A node's best split is found when the node is created: its candidate features are
visited in a random order until `max_features` non-constant features were scored (features
constant in the node do not count, as in scikit-learn's CART). The histograms of the next
`max_features - n_scored` features of that order are built in one pass over the node's rows
(cart_histogram); extra trees take one feature at a time, since each feature's random
threshold is drawn before the next feature. A best threshold lies halfway between the node's
occupied bins on either side (gap_midpoint), as CART's midpoint between values. A categorical
feature is split into two sets of categories (categories: best_cart_set, random_cart_set).
Nodes are then split depth first, or, with max_leaf_nodes > 0, best first (largest gain).
"""

import numpy as np
from numba import njit

from ensembles.engine import node_arrays
from ensembles.engine.binning import MISSING_BIN, N_BIN_SLOTS
from ensembles.engine.borrowing import borrowing
from ensembles.engine.cart_histogram import (
    build_drawn_histograms,
    clear_bins,
    node_bins,
    occupied_bins,
)
from ensembles.engine.cart_partition import partition_node
from ensembles.engine.categories import best_cart_set, empty_set_scratch, random_cart_set
from ensembles.engine.histogram import HISTOGRAM_BINS, sum_node_stats
from ensembles.engine.splitting import (
    NEWTON,
    best_threshold,
    best_two_class_threshold,
    leaf_value,
    node_impurity,
    random_threshold,
)

PURE_IMPURITY = 1e-12
SORTED_BINS_MAX_ROWS = 16  # below, a feature's occupied bins are sorted from the rows' codes


@njit(cache=True, nogil=True)
def cart_workspace(n_rows, n_features, n_stats, criterion, max_depth, max_leaf_nodes,
                   categorical):
    """Room for grow_cart_tree on up to n_rows rows, which the trees of a fit reuse one after
    the other: (nodes, open nodes, partition, work) as _grow_nodes groups them, the node arrays
    for the most nodes such rows make (node_arrays.max_leaf_count). A forest whose every tree
    made its own room left the threads' heaps fragmented: 10 MB more peak memory on the bench's
    100 trees (measured)."""
    capacity = 2 * node_arrays.max_leaf_count(n_rows, max_depth, max_leaf_nodes) - 1
    n_outputs = 1 if criterion == NEWTON else n_stats
    (feature, threshold_bin, missing_left, left_child, right_child, gain, node_start, node_stop,
     node_depth) = node_arrays.empty_nodes(capacity)
    nodes = (feature, threshold_bin, missing_left, left_child, right_child, gain, node_start,
             node_stop, node_depth, np.empty((capacity, n_stats + 1)),
             np.empty((capacity, n_outputs)), node_arrays.empty_category_sets(capacity,
                                                                             categorical))
    is_open, best_gain, best_feature, best_bin, best_missing_left = (
        node_arrays.empty_open_nodes(capacity))
    open_nodes = (is_open, best_gain, best_feature, best_bin, best_missing_left,
                  np.empty(capacity, dtype=np.int32))
    partition = (np.empty(n_rows, dtype=np.int32), np.empty(n_rows, dtype=np.int32))
    work = (np.empty((n_features, HISTOGRAM_BINS, n_stats + 1)), np.empty(n_stats + 1),
            np.empty(n_stats + 1), np.empty(n_features, dtype=np.int32),
            np.empty(N_BIN_SLOTS, dtype=np.int32), np.empty((8, N_BIN_SLOTS)))
    return nodes, open_nodes, partition, work


@njit(cache=True, nogil=True)
def grow_cart_tree(codes, stats, rows, n_bins, bin_upper_values, categorical, criterion,
                   max_depth, max_leaf_nodes, min_samples_split, min_samples_leaf,
                   min_child_weight, min_split_gain, max_features, random_splits, seed,
                   workspace):
    """Grow one tree in `workspace` (cart_workspace, made for at least these rows and the same
    codes, statistics and limits); returns its node arrays (see ensembles.engine.tree.Tree).

    codes: uint8 (n_samples, n_features); stats: float64 (n_samples, n_stats) per-sample
    statistics; rows: int32 rows to use (with bootstrap, the rows drawn at least once).
    max_depth <= 0 and max_leaf_nodes <= 0 mean no limit. A node is a leaf when it may not
    split (node_arrays.may_split: max_depth, min_samples_split, min_samples_leaf), when pure,
    or when no admissible split gains more than min_split_gain. random_splits: one random
    threshold per feature (extra trees); categorical: bool per feature, True for a feature
    split on sets of categories.
    """
    np.random.seed(seed)
    nodes, open_nodes, (partition_room, scratch_room), work = workspace
    n_rows = rows.shape[0]
    capacity = 2 * node_arrays.max_leaf_count(n_rows, max_depth, max_leaf_nodes) - 1
    if (nodes[0].shape[0] < capacity or partition_room.shape[0] < n_rows
            or work[0].shape[0] != codes.shape[1] or work[0].shape[2] != stats.shape[1] + 1):
        raise ValueError("the workspace was made for fewer rows or other codes or statistics")
    (feature, threshold_bin, missing_left, left_child, right_child, gain, node_start, node_stop,
     node_depth, node_sums, value, category_bits) = nodes
    is_open, best_gain, best_feature, best_bin, best_missing_left, _ = open_nodes
    node_arrays.start_tree(feature, threshold_bin, missing_left, left_child, right_child, gain,
                           node_start, node_stop, node_depth, is_open, best_gain, best_feature,
                           best_bin, best_missing_left, category_bits)
    partition = partition_room[:n_rows]
    for i in range(n_rows):  # loops, not array assignments: the engine's docstring
        partition[i] = rows[i]
    hist, left_scratch, right_scratch, feature_order, bins, scan = work
    hist[:] = 0.0  # the scratch starts each tree as it started the first
    left_scratch[:] = 0.0
    right_scratch[:] = 0.0
    for j in range(feature_order.shape[0]):
        feature_order[j] = j  # as the gradient trees' features
    bins[:] = 0
    scan[:] = 0.0
    set_scratch = empty_set_scratch(stats.shape[1] + 1 if categorical.any() else 1)

    node_stop[0] = n_rows
    sum_node_stats(partition, 0, n_rows, stats, node_sums[0])
    n_nodes = _grow_nodes(
        codes, stats, partition, scratch_room[:n_rows], n_bins, bin_upper_values, categorical,
        (criterion, max_depth, max_leaf_nodes, min_samples_split, min_samples_leaf,
         min_child_weight, min_split_gain, max_features, random_splits),
        nodes, open_nodes, (*work, set_scratch))
    return node_arrays.grown_tree(n_nodes, feature, threshold_bin, missing_left, left_child,
                                  right_child, value, gain, node_start, node_stop, category_bits)


@borrowing
def _grow_nodes(codes, stats, partition, scratch, n_bins, bin_upper_values, categorical,
                params, nodes, open_nodes, work):
    """Grow the tree from its root (rows partition[:], sums node_sums[0]): evaluate each new
    node, split the open nodes depth first or best first; returns the number of nodes. The
    arrays, a workspace of grow_cart_tree, are borrowed (borrowing.py): params, nodes,
    open_nodes and work group them as cart_workspace makes them."""
    (criterion, max_depth, max_leaf_nodes, min_samples_split, min_samples_leaf,
     min_child_weight, min_split_gain, max_features, random_splits) = params
    (feature, threshold_bin, missing_left, left_child, right_child, gain, node_start, node_stop,
     node_depth, node_sums, value, category_bits) = nodes
    is_open, best_gain, best_feature, best_bin, best_missing_left, stack = open_nodes
    hist, left_scratch, right_scratch, feature_order, bins, scan, set_scratch = work
    n_nodes = np.int64(1)
    n_leaves = 1
    stack_size = 0
    if _evaluate_node(node_arrays.ROOT, codes, stats, partition, n_bins, bin_upper_values,
                      categorical, criterion, max_depth, min_samples_split, min_samples_leaf,
                      min_child_weight, max_features, random_splits, node_start, node_stop,
                      node_depth, node_sums, value, best_gain, best_feature, best_bin,
                      best_missing_left, category_bits, hist, left_scratch, right_scratch,
                      feature_order, bins, scan, set_scratch):
        is_open[0] = True
        stack[0] = 0
        stack_size = 1

    while True:
        if max_leaf_nodes > 0:
            node = node_arrays.largest_gain_open_node(is_open, best_gain, n_nodes)
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

        _split_node(node, n_nodes, codes, partition, scratch, stats, feature, threshold_bin,
                    missing_left, left_child, right_child, gain, node_start, node_stop,
                    node_depth, node_sums, is_open, best_gain, best_feature, best_bin,
                    best_missing_left, category_bits)
        left_id = n_nodes
        right_id = n_nodes + 1
        n_nodes += 2
        n_leaves += 1
        for child in (right_id, left_id):
            if _evaluate_node(child, codes, stats, partition, n_bins, bin_upper_values,
                              categorical, criterion, max_depth, min_samples_split,
                              min_samples_leaf, min_child_weight, max_features, random_splits,
                              node_start, node_stop, node_depth, node_sums, value, best_gain,
                              best_feature, best_bin, best_missing_left, category_bits, hist,
                              left_scratch, right_scratch, feature_order, bins, scan,
                              set_scratch):
                is_open[child] = True
                stack[stack_size] = child
                stack_size += 1
    return n_nodes


@borrowing
def _evaluate_node(node, codes, stats, partition, n_bins, bin_upper_values, categorical,
                   criterion, max_depth, min_samples_split, min_samples_leaf, min_child_weight,
                   max_features, random_splits, node_start, node_stop, node_depth, node_sums,
                   value, best_gain, best_feature, best_bin, best_missing_left, category_bits,
                   hist, left, right, feature_order, bins, scan, set_scratch):
    """Set the node's leaf value and best split (a set split's set in category_bits[node]);
    True when the node may be split."""
    n_stats = stats.shape[1]
    n_features = codes.shape[1]
    start = node_start[node]
    stop = node_stop[node]
    n_node = stop - start
    sums = node_sums[node]
    leaf_value(sums, n_stats, criterion, 0.0, 0.0, value[node])
    if (not node_arrays.may_split(n_node, node_depth[node], max_depth, min_samples_split,
                      min_samples_leaf)
            or node_impurity(sums, n_stats, criterion) <= PURE_IMPURITY):
        return False
    n_drawn = np.int64(0)
    n_scored = 0
    while n_scored < max_features and n_drawn < n_features:
        n_batch = 1 if random_splits else min(max_features - n_scored, n_features - n_drawn)
        _draw_features(feature_order, n_drawn, n_drawn + n_batch)
        build_drawn_histograms(codes, partition, start, stop, stats, feature_order, n_drawn,
                               n_drawn + n_batch, hist)
        for k in range(n_drawn, n_drawn + n_batch):
            f = feature_order[k]
            if n_node < SORTED_BINS_MAX_ROWS:
                n_occupied = node_bins(codes, partition, start, stop, f, bins)
            else:
                n_occupied = occupied_bins(hist[k], n_bins[f], n_stats, bins)
            if n_occupied + (hist[k, MISSING_BIN, n_stats] > 0.0) > 1 and categorical[f]:
                set_bits = set_scratch[3]
                if random_splits:
                    set_gain, set_missing_left = random_cart_set(
                        hist[k], n_bins[f], sums, criterion, min_samples_leaf, min_child_weight,
                        left, right, set_scratch, set_bits)
                else:
                    set_gain, set_missing_left = best_cart_set(
                        hist[k], n_bins[f], sums, criterion, min_samples_leaf, min_child_weight,
                        left, right, set_scratch, set_bits)
                node_arrays.offer_set_split(node, set_gain, f, set_missing_left, set_bits,
                                            best_gain, best_feature, best_bin,
                                            best_missing_left, category_bits)
                n_scored += 1
            elif n_occupied + (hist[k, MISSING_BIN, n_stats] > 0.0) > 1:  # not constant
                split_gain, split_bin, split_missing_left = _feature_split(
                    hist[k], bins, n_occupied, n_bins[f], bin_upper_values[f], sums, criterion,
                    min_samples_leaf, min_child_weight, random_splits, left, right, scan)
                node_arrays.offer_split(node, split_gain, f, split_bin, split_missing_left,
                                        best_gain, best_feature, best_bin, best_missing_left)
                n_scored += 1
            clear_bins(hist[k], bins, n_occupied)
        n_drawn += n_batch
    return best_feature[node] >= 0


@borrowing
def _split_node(node, n_nodes, codes, partition, scratch, stats, feature, threshold_bin,
                missing_left, left_child, right_child, gain, node_start, node_stop, node_depth,
                node_sums, is_open, best_gain, best_feature, best_bin, best_missing_left,
                category_bits):
    """Apply the node's best split: partition its rows, summing the left child's statistics,
    then record the split and its children (node_arrays.record_split)."""
    start = node_start[node]
    left_id = n_nodes
    right_id = n_nodes + 1
    n_left = partition_node(codes, best_feature[node], best_bin[node], best_missing_left[node],
                            category_bits[min(node, category_bits.shape[0] - 1)], partition,
                            scratch, start, node_stop[node], stats, node_sums[left_id])
    for channel in range(node_sums.shape[1]):
        node_sums[right_id, channel] = node_sums[node, channel] - node_sums[left_id, channel]
    node_arrays.record_split(node, n_nodes, feature, threshold_bin, missing_left, left_child,
                             right_child, gain, node_depth, is_open, best_gain, best_feature,
                             best_bin, best_missing_left, category_bits)
    node_arrays.place_children(node, n_left, left_child, node_start, node_stop)


@borrowing
def _draw_features(feature_order, first, last):
    """Fisher-Yates steps first..last-1: feature_order[first:last] becomes the next features
    of a uniformly random order (the draws of one node continue its sequence)."""
    n_features = feature_order.shape[0]
    for i in range(first, last):
        j = i + np.random.randint(n_features - i)
        f = feature_order[j]
        feature_order[j] = feature_order[i]
        feature_order[i] = f


@borrowing
def _feature_split(hist, bins, n_occupied, n_bins, upper_values, sums, criterion,
                   min_samples_leaf, min_child_weight, random_splits, left, right, scan):
    """(gain, bin, missing_left) of one feature: a random threshold (extra trees), or the best
    one, scanned with scalar sums for two classes."""
    n_stats = sums.shape[0] - 1
    if random_splits:
        return random_threshold(hist, n_bins, upper_values, sums, criterion, 0.0, 0.0,
                                min_samples_leaf, min_child_weight, left, right)
    if criterion != NEWTON and n_stats == 2:
        gain, split_bin, missing_left = best_two_class_threshold(
            hist, bins, n_occupied, n_bins, sums, criterion, min_samples_leaf,
            min_child_weight, scan)
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

