"""Growth of one CART tree on binned data: random features per node, best or random thresholds.

The node's rows are a slice of one partition array that each split reorders in place (left rows
first). A node's best split is found when the node is created: its candidate features are
visited in a random order until `max_features` non-constant features were scored (features
constant in the node do not count, as in scikit-learn's CART). The histograms of the next
`max_features - n_scored` features of that order are built in one pass over the node's rows
(cart_histogram); extra trees take one feature at a time, since each feature's random
threshold is drawn before the next feature, and cut a numeric one from the node's rows
without a histogram (_offer_random_row_split). A best threshold lies halfway between the node's
occupied bins on either side (gap_midpoint), as CART's midpoint between values. A categorical
feature is split into two sets of categories (categories: best_cart_set, random_cart_set).
Nodes are then split depth first, or, with max_leaves > 0, best first (largest gain).
"""

from typing import NamedTuple

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
from ensembles.engine.categories import (
    best_cart_set,
    clear_set_scratch,
    empty_set_scratch,
    random_cart_set,
)
from ensembles.engine.histogram import HISTOGRAM_BINS, sum_node_stats
from ensembles.engine.splitting import (
    GINI,
    NEWTON,
    best_missing_side,
    best_threshold,
    best_two_class_threshold,
    leaf_value,
    node_impurity,
    node_score,
)

PURE_IMPURITY = 1e-12
SORTED_BINS_MAX_ROWS = 16  # below, a feature's occupied bins are sorted from the rows' codes


class CartParams(NamedTuple):
    """How each tree is grown (meanings as in scikit-learn; 0: no limit, as in XGBoost).

    criterion: splitting.GINI, ENTROPY or NEWTON (squared error); max_features: how many
    non-constant features each node scores; random_splits: one random threshold per feature
    (extra trees); min_child_weight and min_split_gain as in XGBoost. The defaults admit every
    split whose children carry weight: min_child_weight is the smallest positive float, so a
    child whose weight, found by subtracting its sibling's from its parent's, rounds to 0 or
    below is no split (AdaBoost's weights span many orders of magnitude after a few rounds;
    with the exact sums of integer bootstrap counts it never binds)."""

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
    value and the category set (node_arrays.empty_category_sets), and the stack of nodes to
    split."""

    nodes: node_arrays.NodeArrays
    open_nodes: node_arrays.OpenNodes
    node_sums: np.ndarray
    value: np.ndarray
    category_bits: np.ndarray
    stack: np.ndarray


class CartScratch(NamedTuple):
    """The scratch of one node's evaluation: the drawn features' histograms, the two sides'
    sums of a scan, the feature order, the node's occupied bins, the two-class scan's buffers
    and a set split's (categories.empty_set_scratch)."""

    hist: np.ndarray
    left: np.ndarray
    right: np.ndarray
    feature_order: np.ndarray
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
                     np.empty(capacity, dtype=np.int32))
    work = CartScratch(np.empty((n_features, HISTOGRAM_BINS, n_stats + 1)),
                       np.empty(n_stats + 1), np.empty(n_stats + 1),
                       np.empty(n_features, dtype=np.int32), np.empty(N_BIN_SLOTS, dtype=np.int32),
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
    sum_node_stats(partition, 0, n_rows, data.stats, tree.node_sums[0])
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
    n_drawn = np.int64(0)
    n_scored = 0
    while n_scored < max_features and n_drawn < n_features:
        n_batch = 1 if random_splits else min(max_features - n_scored, n_features - n_drawn)
        _draw_features(feature_order, n_drawn, n_drawn + n_batch)
        if random_splits and not categorical[feature_order[n_drawn]]:
            n_scored += _offer_random_row_split(node, feature_order[n_drawn], data, partition,
                                                params, tree, work)
            n_drawn += 1
            continue
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
                                            tree.open_nodes, tree.category_bits)
                n_scored += 1
            elif n_occupied + (hist[k, MISSING_BIN, n_stats] > 0.0) > 1:  # not constant
                split_gain, split_bin, split_missing_left = _feature_split(
                    hist[k], n_occupied, n_bins[f], sums, params, work)
                node_arrays.offer_split(node, split_gain, f, split_bin, split_missing_left,
                                        tree.open_nodes)
                n_scored += 1
            clear_bins(hist[k], bins, n_occupied)
        n_drawn += n_batch
    return tree.open_nodes.best_feature[node] >= 0


@borrowing
def _offer_random_row_split(node, feature, data, partition, params, tree, work):
    """Extra trees' split of a numeric feature, read from the node's rows without a histogram
    (as scikit-learn's random splitter): the node's smallest and largest code, a threshold
    drawn uniformly between their values (Geurts et al. 2006; Straka, "Extra Trees"), "x <= u"
    going left: the split is "code <= b" for the largest b with bin_upper_values[b] <= u; the
    left side and the missing rows summed over the rows, the missing rows sent to the better
    side (splitting.best_missing_side), or, without any, NaN later following the larger side.
    Two passes over the node's rows, no histogram and no scan of 256 bins. Returns 1 when the
    feature is not constant in the node (it counts as scored), else 0."""
    codes, stats, criterion = data.codes, data.stats, params.criterion
    start, stop = tree.nodes.node_start[node], tree.nodes.node_stop[node]
    sums = tree.node_sums[node]
    n_stats = stats.shape[1]
    low = np.int64(MISSING_BIN)
    high = np.int64(-1)
    n_missing = 0
    for position in range(start, stop):
        code = np.int64(codes[partition[position], feature])
        if code == MISSING_BIN:
            n_missing += 1
        else:
            low = min(low, code)
            high = max(high, code)
    if high < 0 or (low == high and n_missing == 0):
        return 0
    if low == high:
        return 1  # one value and missing rows: scored, no split
    upper = data.bin_upper_values[feature]
    draw = upper[low] + np.random.random() * (upper[high] - upper[low])
    threshold_bin = low
    for b in range(low + 1, high):
        if upper[b] <= draw:
            threshold_bin = b
    left, missing = work.left, work.hist[0, MISSING_BIN]  # a zero slot between nodes
    for channel in range(n_stats + 1):
        left[channel] = 0.0
    for position in range(start, stop):
        row = partition[position]
        code = codes[row, feature]
        if code <= threshold_bin:  # MISSING_BIN is above every threshold
            _add_row(stats[row], left)
        elif code == MISSING_BIN:
            _add_row(stats[row], missing)
    gain, missing_left = best_missing_side(
        work.hist[0], sums, node_score(sums, n_stats, criterion, 0.0, 0.0), criterion, 0.0, 0.0,
        params.min_samples_leaf, params.min_child_weight, left, work.right)
    if n_missing == 0:
        missing_left = left[n_stats] >= sums[n_stats] - left[n_stats]  # _larger_side_is_left
    for channel in range(n_stats + 1):
        missing[channel] = 0.0
    node_arrays.offer_split(node, gain, feature, threshold_bin, missing_left, tree.open_nodes)
    return 1


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

