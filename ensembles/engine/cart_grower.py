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
cut their drawn features from the node's rows without a histogram
(_offer_random_row_splits). A best threshold lies halfway between the node's occupied bins on
either side (gap_midpoint), as CART's midpoint between values. A categorical feature is split
into two sets of categories (categories: best_cart_set, random_category_set). Nodes are then split
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
    SET_WORDS_64,
    add_to_set,
    best_cart_set,
    clear_set_scratch,
    empty_set_scratch,
    in_set,
    random_category_set,
    set_of_chosen,
)
from ensembles.engine.histogram import HISTOGRAM_BINS, sum_node_stats
from ensembles.engine.random_draws import DRAW_STATE_WORDS, seed_draws, shuffle_steps, uniform
from ensembles.engine.splitting import (
    GINI,
    NEWTON,
    best_missing_side,
    best_threshold,
    best_two_class_threshold,
    leaf_outputs,
    leaf_value,
    node_impurity,
    node_score,
    two_class_missing_side,
)

PURE_IMPURITY = 1e-12
SORTED_BINS_MAX_ROWS = 16  # below, a feature's occupied bins are sorted from the rows' codes
CUT_LOW, CUT_HIGH, CUT_MISSING, CUT_BIN = 0, 1, 2, 3  # rows of CartScratch.cut_bounds
N_CUT_BOUNDS = 4
CUTS_A_PASS = 4  # extra trees' cuts summed in one pass over a node's rows (in registers)
ALL_BITS = np.uint64(0xFFFF_FFFF_FFFF_FFFF)
OCCUPIED, CHOSEN = 0, 1  # CartScratch.cut_sets[k]: a set cut's categories, those going left
# (a threshold cut's CHOSEN: its codes 0..b, for the second pass: _sum_cut_sides)
MISSING_WORD, MISSING_BIT = MISSING_BIN >> 6, np.uint64(1) << np.uint64(MISSING_BIN & 63)


class CartParams(NamedTuple):
    """How each tree is grown (meanings as in scikit-learn; 0: no limit, as in XGBoost).

    criterion: splitting.GINI, ENTROPY, NEWTON (squared error) or SUMMED_NEWTON (K outputs'
    squared errors summed, one leaf value per output); max_features: how many
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
    missing rows and threshold (CUT_LOW, CUT_HIGH, CUT_MISSING, CUT_BIN) or, for a categorical
    one, its node's categories and those going left (OCCUPIED, CHOSEN), the node's occupied
    bins, the two-class scan's buffers, a set split's (categories.empty_set_scratch) and the
    tree's random draws' state (random_draws)."""

    hist: np.ndarray
    left: np.ndarray
    right: np.ndarray
    feature_order: np.ndarray
    drawn: np.ndarray
    cut_features: np.ndarray
    cut_bounds: np.ndarray
    cut_sets: np.ndarray
    bins: np.ndarray
    scan: np.ndarray
    set_scratch: tuple
    draw_state: np.ndarray


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
    n_outputs = leaf_outputs(n_stats, criterion)
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
                       np.empty((n_features, 2, SET_WORDS_64), dtype=np.uint64),
                       np.empty(N_BIN_SLOTS, dtype=np.int32),
                       np.empty((8, N_BIN_SLOTS)),
                       empty_set_scratch(n_stats + 1 if categorical.any() else 1),
                       np.empty(DRAW_STATE_WORDS, dtype=np.uint64))
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
    tree, work = workspace.tree, workspace.work
    seed_draws(work.draw_state, seed)
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
        shuffle_steps(feature_order, n_drawn, n_drawn + n_batch, work.draw_state)
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
        if random_splits:
            if n_cut + n_unknown > 0:
                n_scored += _offer_random_row_splits(node, n_cut, n_unknown, data, partition,
                                                     params, tree, work)
            continue
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
def _offer_random_row_splits(node, n_cut, n_sets, data, partition, params, tree, work):
    """Extra trees' splits of the drawn numeric features work.cut_features[:n_cut] and
    categorical ones work.drawn[:n_sets], read from the node's rows without a histogram (as
    scikit-learn's random splitter). A numeric feature: its smallest and largest code in the
    node, a threshold drawn uniformly between their values (Geurts et al. 2006; Straka,
    "Extra Trees"), "x <= u" going left: the split is "code <= b" for the largest b with
    bin_upper_values[b] <= u. A categorical one: the categories the node takes, a random set of
    them going left (categories.random_category_set). The left sides and the missing rows are
    summed over the rows, the missing rows sent to the better side (splitting's
    best_missing_side), or, without any, later with the larger side. Two passes over the
    node's rows for all the features (a row's codes are adjacent), the draws in between, the
    numeric features' first, each kind in its order. A feature constant in the node joins its
    known constants. Returns how many features were not constant (they count as scored; one
    value and missing rows: scored, no split)."""
    codes, stats = data.codes, data.stats
    start, stop = tree.nodes.node_start[node], tree.nodes.node_stop[node]
    features, sets, n_missing = work.cut_features, work.cut_sets, work.cut_bounds[CUT_MISSING]
    for j in range(n_sets):  # the categorical features after the numeric ones
        features[n_cut + j] = work.drawn[j]
    _read_node_values(codes, partition, start, stop, features, n_cut, n_cut + n_sets, work)
    n_scored, n_thresholds = _draw_thresholds(node, n_cut, data.bin_upper_values, tree, work)
    n_split = n_thresholds  # the features with a cut, moved to the front in their order
    for k in range(n_cut, n_cut + n_sets):
        has_missing = sets[k, OCCUPIED, MISSING_WORD] & MISSING_BIT != 0
        sets[k, OCCUPIED, MISSING_WORD] &= ~MISSING_BIT
        m = random_category_set(sets[k, OCCUPIED], work.bins, sets[k, CHOSEN],
                                work.draw_state)
        if m + np.int64(has_missing) <= 1:
            add_to_set(tree.known_constant[node], features[k])
            continue
        n_scored += 1
        if m < 2:
            continue
        features[n_split] = features[k]
        n_missing[n_split] = np.int64(has_missing)
        for word in range(SET_WORDS_64):
            sets[n_split, OCCUPIED, word] = sets[k, OCCUPIED, word]
            sets[n_split, CHOSEN, word] = sets[k, CHOSEN, word]
        n_split += 1
    _sum_cut_sides(codes, partition, start, stop, stats, n_thresholds, n_split, work)
    _offer_cut_sides(node, n_thresholds, n_split, params, tree, work)
    return n_scored


@njit(inline="always", nogil=True, _nrt=False)
def _read_node_values(codes, partition, start, stop, features, n_cut, n_slots, work):
    """The first pass over the node's rows: for the numeric features features[:n_cut] their
    smallest and largest code and their missing rows (work.cut_bounds' CUT_LOW, CUT_HIGH,
    CUT_MISSING), for the categorical ones features[n_cut:n_slots] the codes they take, bits
    of work.cut_sets[k, OCCUPIED] (random_category_set's layout, the missing bin included)."""
    low, high = work.cut_bounds[CUT_LOW], work.cut_bounds[CUT_HIGH]
    n_missing, sets = work.cut_bounds[CUT_MISSING], work.cut_sets
    for k in range(n_cut):
        low[k] = MISSING_BIN
        high[k] = -1
        n_missing[k] = 0
    for k in range(n_cut, n_slots):
        for word in range(SET_WORDS_64):
            sets[k, OCCUPIED, word] = 0
    for position in range(start, stop):  # unsigned indices: numba wraps negative ones
        row = np.uint64(partition[position])
        for k in range(n_cut):
            code = np.int64(codes[row, np.uint64(features[k])])
            if code == MISSING_BIN:
                n_missing[k] += 1
            else:
                low[k] = min(low[k], code)
                high[k] = max(high[k], code)
        for k in range(np.uint64(n_cut), np.uint64(n_slots)):
            code = np.uint64(codes[row, np.uint64(features[k])])
            sets[k, OCCUPIED, code >> np.uint64(6)] |= np.uint64(1) << (code & np.uint64(63))


@njit(inline="always", nogil=True, _nrt=False)
def _draw_thresholds(node, n_cut, bin_upper_values, tree, work):
    """Each numeric cut feature's threshold, drawn uniformly between its smallest and largest
    value in the node (_offer_random_row_splits), as the code bin work.cut_bounds[CUT_BIN];
    the features with one are moved to the front of work.cut_features, in their order.
    Returns (the features not constant, those with a threshold)."""
    features = work.cut_features
    low, high = work.cut_bounds[CUT_LOW], work.cut_bounds[CUT_HIGH]
    n_missing, threshold_bin = work.cut_bounds[CUT_MISSING], work.cut_bounds[CUT_BIN]
    n_scored = 0
    n_split = 0
    for k in range(n_cut):
        if high[k] < 0 or (low[k] == high[k] and n_missing[k] == 0):
            add_to_set(tree.known_constant[node], features[k])
            continue
        n_scored += 1
        if low[k] == high[k]:
            continue
        upper = bin_upper_values[features[k]]
        draw = upper[low[k]] + uniform(work.draw_state) * (upper[high[k]] - upper[low[k]])
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
    return n_scored, n_split


@njit(inline="always", nogil=True, _nrt=False)
def _sum_cut_sides(codes, partition, start, stop, stats, n_thresholds, n_split, work):
    """The second pass: work.hist[k, 0] = the left side's sums of cut k < n_split (a threshold
    below n_thresholds, a set after), work.hist[k, MISSING_BIN] its missing rows' sums."""
    features, threshold_bin, sets, hist = (work.cut_features, work.cut_bounds[CUT_BIN],
                                           work.cut_sets, work.hist)
    n_stats = stats.shape[1]
    if n_stats == TWO_CLASS_STATS or n_stats == SQUARED_ERROR_STATS:
        for k in range(n_thresholds):  # a threshold's left side as a set: codes 0..b
            _codes_up_to(threshold_bin[k], sets[k, CHOSEN])
        for first in range(0, n_split, CUTS_A_PASS):
            n_cuts = min(CUTS_A_PASS, n_split - first)
            if n_stats == TWO_CLASS_STATS:
                _add_left_rows_of_cuts(codes, partition, start, stop, stats, features, sets,
                                       first, n_cuts, hist, TWO_CLASS_STATS)
            else:
                _add_left_rows_of_cuts(codes, partition, start, stop, stats, features, sets,
                                       first, n_cuts, hist, SQUARED_ERROR_STATS)
    else:
        _add_left_rows(codes, partition, start, stop, stats, features, threshold_bin, sets,
                       n_thresholds, n_split, hist, n_stats)
    n_missing = work.cut_bounds[CUT_MISSING]
    for k in range(n_split):
        for position in range(start, stop if n_missing[k] > 0 else start):
            row = partition[position]
            if codes[row, features[k]] == MISSING_BIN:
                _add_row(stats[row], hist[k, MISSING_BIN])


@njit(inline="always", nogil=True, _nrt=False)
def _offer_cut_sides(node, n_thresholds, n_split, params, tree, work):
    """Offer the node each cut k < n_split (a threshold below n_thresholds, a set after) with
    its gain from the sides' sums (_sum_cut_sides), the missing rows on the better side, or,
    without any, on the larger; the sums' slots are zeroed after."""
    criterion, sums, hist = params.criterion, tree.node_sums[node], work.hist
    features, threshold_bin, sets = work.cut_features, work.cut_bounds[CUT_BIN], work.cut_sets
    n_missing = work.cut_bounds[CUT_MISSING]
    n_stats = sums.shape[0] - 1
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
        if k < n_thresholds:
            node_arrays.offer_split(node, gain, features[k], threshold_bin[k], missing_left,
                                    tree.open_nodes)
        else:
            set_bits = work.set_scratch[3]
            set_of_chosen(sets[k, OCCUPIED], sets[k, CHOSEN], missing_left, set_bits)
            node_arrays.offer_set_split(node, gain, features[k], missing_left, set_bits,
                                        tree.open_nodes, tree.category_bits)
        for channel in range(n_stats + 1):
            left[channel] = 0.0
            hist[k, MISSING_BIN, channel] = 0.0


@njit(inline="always", nogil=True, _nrt=False)
def _add_left_rows(codes, partition, start, stop, stats, features, threshold_bin, sets,
                   n_thresholds, n_split, hist, n_stats):
    """hist[k, 0] += (the statistics, 1) of the rows partition[start:stop] going left at cut
    k < n_split: code <= threshold_bin[k] in column features[k] for k < n_thresholds, the code
    in the set sets[k, CHOSEN] after (in slot k's bin 0), for statistics other than two
    classes' and regression's. Inlined, so that a constant n_stats unrolls the channels: a
    loop over them for every row and feature cost its vector loop's set-up each time. Its
    thresholds stay compares, not sets of codes 0..b as in _add_left_rows_of_cuts: a compare
    is cheaper than a set's word here (docs/speed_history.md)."""
    for position in range(start, stop):
        row = np.uint64(partition[position])  # unsigned indices: numba wraps negative ones
        for k in range(np.uint64(n_thresholds)):
            # no branch: a row's side is a coin flip to predict; MISSING_BIN is above every cut
            goes_left = 1.0 if codes[row, np.uint64(features[k])] <= threshold_bin[k] else 0.0
            _add_to_left(hist, k, stats, row, goes_left, n_stats)
        for k in range(np.uint64(n_thresholds), np.uint64(n_split)):
            goes_left = _in_set_factor(sets[k, CHOSEN], codes[row, np.uint64(features[k])])
            _add_to_left(hist, k, stats, row, goes_left, n_stats)


@njit(inline="always", nogil=True, _nrt=False)
def _add_left_rows_of_cuts(codes, partition, start, stop, stats, features, sets, first, n_cuts,
                           hist, n_stats):
    """hist[k, 0] += (the statistics, 1) of the rows partition[start:stop] whose code in
    column features[k] is in sets[k, CHOSEN], for the n_cuts <= CUTS_A_PASS cuts k = first,
    first + 1, ...: _add_left_rows for two classes' or regression's statistics (n_stats 2 or
    3), each cut's sums in local variables, in the same order (the same sums): in hist, each
    row's sums were loaded and stored back. A cut past n_cuts reads cut `first` again and is
    not kept."""
    cut_1 = first + 1 if n_cuts > 1 else first
    cut_2 = first + 2 if n_cuts > 2 else first
    cut_3 = first + 3 if n_cuts > 3 else first
    feature_0, feature_1 = np.uint64(features[first]), np.uint64(features[cut_1])
    feature_2, feature_3 = np.uint64(features[cut_2]), np.uint64(features[cut_3])
    set_0, set_1, set_2, set_3 = (sets[first, CHOSEN], sets[cut_1, CHOSEN], sets[cut_2, CHOSEN],
                                  sets[cut_3, CHOSEN])
    sums_0 = (0.0, 0.0, 0.0, 0.0)
    sums_1 = sums_2 = sums_3 = sums_0
    for position in range(start, stop):
        row = np.uint64(partition[position])  # unsigned indices: numba wraps negative ones
        row_stats = (stats[row, 0], stats[row, 1],
                     stats[row, np.uint64(2)] if n_stats > 2 else 0.0)
        sums_0 = _add_if_in_set(sums_0, codes[row, feature_0], set_0, row_stats)
        sums_1 = _add_if_in_set(sums_1, codes[row, feature_1], set_1, row_stats)
        sums_2 = _add_if_in_set(sums_2, codes[row, feature_2], set_2, row_stats)
        sums_3 = _add_if_in_set(sums_3, codes[row, feature_3], set_3, row_stats)
    for j, sums in enumerate((sums_0, sums_1, sums_2, sums_3)):
        if j < n_cuts:
            for channel in range(n_stats):
                hist[first + j, 0, channel] += sums[channel]
            hist[first + j, 0, n_stats] += sums[3]


@njit(inline="always", nogil=True, _nrt=False)
def _add_if_in_set(sums, code, chosen, row_stats):
    """sums + (row_stats, 1) when the code is in the set `chosen`, + 0 else (times
    _in_set_factor)."""
    left = _in_set_factor(chosen, code)
    return (sums[0] + left * row_stats[0], sums[1] + left * row_stats[1],
            sums[2] + left * row_stats[2], sums[3] + left)


@njit(inline="always", nogil=True, _nrt=False)
def _in_set_factor(chosen, code):
    """1.0 when the code is in the set `chosen` (random_category_set's layout: bit code % 64
    of word code // 64), 0.0 else: a factor of the row's statistics, no branch (a row's side
    is a coin flip to predict). MISSING_BIN is in no set."""
    code = np.uint64(code)
    return np.float64((chosen[code >> np.uint64(6)] >> (code & np.uint64(63))) & np.uint64(1))


@njit(inline="always", nogil=True, _nrt=False)
def _codes_up_to(last, chosen):
    """chosen (random_category_set's layout) = the codes 0..last."""
    for word in range(SET_WORDS_64):
        n_bits = np.int64(last) + 1 - 64 * word
        chosen[word] = (ALL_BITS if n_bits >= 64
                        else (np.uint64(1) << np.uint64(max(n_bits, 0))) - np.uint64(1))


@njit(inline="always", nogil=True, _nrt=False)
def _add_to_left(hist, k, stats, row, goes_left, n_stats):
    """hist[k, 0] += goes_left * (stats[row], 1): one row's share of a cut's left side."""
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

