import dataclasses

import numpy as np
import pytest
from sklearn.datasets import make_classification

from ensembles import GradientBoostingClassifier
from ensembles.engine.binning import BinMapper
from ensembles.engine.categories import CategoryRegularization
from ensembles.engine.gradient_grower import (
    DEPTHWISE,
    INITIAL_SLOTS,
    LOSSGUIDE,
    GradientParams,
    TreeDelivery,
    gradient_workspace,
    grow_gradient_tree,
    grow_gradient_tree_fields,
)
from ensembles.engine.histogram import (
    CHUNK_ROWS,
    COUNTED_CHANNELS,
    GRADIENT_CHANNELS,
    empty_histograms,
)
from ensembles.engine.node_arrays import max_leaf_count
from ensembles.engine.tree import LEAF, PARTITION_ROW_BLOCK, Tree


def _table_with_missing_values(n_rows):
    """(bin mapper, row-major codes, column-major codes, (g, h)) of 4 features, a tenth
    missing, and a gradient with structure in the first two and in the missing values."""
    rng = np.random.default_rng(6)
    X = rng.normal(size=(n_rows, 4))
    X[rng.uniform(size=X.shape) < 0.1] = np.nan
    finite = np.nan_to_num(X)
    grad = np.where(np.isnan(X[:, 0]), 1.0, np.sin(3 * finite[:, 0]) + finite[:, 1] ** 2)
    stats = np.column_stack([grad + 0.1 * rng.normal(size=n_rows), np.ones(n_rows)])
    bin_mapper = BinMapper(64).fit(X)
    codes = bin_mapper.transform(X, order="C")
    return bin_mapper, codes, np.asfortranarray(codes), stats


def _params(grow_policy, max_depth, max_leaves):
    return GradientParams(grow_policy, max_depth, max_leaves, 1.0, 0.0, 0.0, 1.0, 1, 0.0,
                          1.0).typed()


@pytest.mark.parametrize(("grow_policy", "max_depth", "max_leaves"),
                         [(DEPTHWISE, 4, 0), (LOSSGUIDE, 0, 9)])
def test_training_rows_get_the_leaf_values_of_a_tree_walk(grow_policy, max_depth, max_leaves):
    """add_by_partition (the grower's partition, the last split's rows routed by the split)
    adds to each training row exactly the value a walk of its codes reaches, and so does
    grow_gradient_tree_fields when it adds the tree it grows (its leaf values shrunk as
    numpy shrinks them)."""
    n_rows = 2 * PARTITION_ROW_BLOCK + 900  # blocks that cut across the partition's ranges
    bin_mapper, codes, columns, stats = _table_with_missing_values(n_rows)
    workspace = gradient_workspace(n_rows, 4, max_depth, max_leaves, 1,
                                   bin_mapper.categorical_)
    grown = [bin_mapper.n_bins_, bin_mapper.categorical_, np.arange(4, dtype=np.int32),
             _params(grow_policy, max_depth, max_leaves), CategoryRegularization(), 0,
             workspace]
    arrays, partition, node_start, _ = grow_gradient_tree(
        codes, columns, stats, np.arange(n_rows, dtype=np.int32), *grown)
    unshrunk = Tree.from_grown(arrays, bin_mapper)
    tree = dataclasses.replace(unshrunk, value=unshrunk.value * 0.3)
    assert (node_start < 0).any()  # the last splits' rows were not partitioned
    if grow_policy == DEPTHWISE:
        assert tree.depth == max_depth
    else:
        assert tree.n_leaves == max_leaves
    by_partition = np.full((n_rows, 1), 0.5)
    tree.add_by_partition(partition, node_start, columns, by_partition)
    assert np.array_equal(by_partition, 0.5 + tree.predict_binned(codes))

    while_grown = np.full((n_rows, 1), 0.5)
    fields, *_ = grow_gradient_tree_fields(codes, columns, stats,
                                           np.arange(n_rows, dtype=np.int32), *grown,
                                           TreeDelivery(bin_mapper.padded_edges, 0.3,
                                                        while_grown))
    assert np.array_equal(Tree.from_fields(fields).value, tree.value)
    assert np.array_equal(while_grown, by_partition)


def test_a_tree_is_added_while_grown_only_when_grown_on_every_row():
    """grow_gradient_tree_fields refuses to add a tree grown on a subsample to every row."""
    bin_mapper, codes, columns, stats = _table_with_missing_values(500)
    with pytest.raises(ValueError, match="grown on every row"):
        grow_gradient_tree_fields(
            codes, columns, stats, np.arange(0, 500, 2, dtype=np.int32), bin_mapper.n_bins_,
            bin_mapper.categorical_, np.arange(4, dtype=np.int32), _params(DEPTHWISE, 3, 0),
            CategoryRegularization(), 0,
            gradient_workspace(500, 4, 3, 0, 1, bin_mapper.categorical_),
            TreeDelivery(bin_mapper.padded_edges, 0.3, np.zeros((500, 1))))


@pytest.mark.parametrize("grow_policy", [DEPTHWISE, LOSSGUIDE])
def test_the_histogram_pool_grows_when_a_tree_has_more_open_leaves_than_slots(grow_policy):
    """A workspace starts with at most INITIAL_SLOTS slots. A tree with more open leaves than
    slots doubles the pool (here from 2), returns it for the next tree, and is the same tree
    as one grown with room for every leaf from the start."""
    rng = np.random.default_rng(8)
    n_rows = 6000
    X = rng.normal(size=(n_rows, 5))
    stats = np.column_stack([np.sin(4 * X[:, 0]) * X[:, 1] + rng.normal(size=n_rows),
                             np.ones(n_rows)])
    bin_mapper = BinMapper(255).fit(X)
    codes = bin_mapper.transform(X, order="C")
    max_depth, max_leaves = (12, 0) if grow_policy == DEPTHWISE else (0, 600)

    def grow(workspace):
        arrays, _, _, workspace = grow_gradient_tree(
            codes, np.asfortranarray(codes), stats, np.arange(n_rows, dtype=np.int32),
            bin_mapper.n_bins_, bin_mapper.categorical_, np.arange(5, dtype=np.int32),
            GradientParams(grow_policy, max_depth, max_leaves, 1.0, 0.0, 0.0, 0.0, 1, 0.0,
                           1.0).typed(), CategoryRegularization(), 0, workspace)
        return arrays, workspace

    workspace = gradient_workspace(n_rows, 5, max_depth, max_leaves, 1,
                                   bin_mapper.categorical_)
    assert len(workspace[0]) == INITIAL_SLOTS < max_leaf_count(n_rows, max_depth, max_leaves)
    grown, returned = grow((empty_histograms(2, 5, GRADIENT_CHANNELS), workspace[1]))  # doubles
    assert len(returned[0]) >= 16
    roomy = (empty_histograms(max_leaf_count(n_rows, max_depth, max_leaves), 5,
                              GRADIENT_CHANNELS), workspace[1])
    for a, b in zip(grown, grow(roomy)[0], strict=True):
        assert np.array_equal(a, b)
    assert (grown[0] == LEAF).sum() > 100


def test_a_depth_20_gbt_fits_on_200k_rows():
    """A slot per possible leaf (min(rows, 2^20)) was 46 GB of histograms here, and the fit
    failed with MemoryError where XGBoost's takes a second."""
    X, y = make_classification(n_samples=200_000, n_features=28, random_state=0)
    model = GradientBoostingClassifier(n_estimators=2, max_depth=20).fit(X, y)
    assert max(tree.depth for round_trees in model.trees_ for tree in round_trees) > 12
    assert model.score(X, y) > 0.9


def test_a_full_depth_6_tree_grows_in_the_initial_slots():
    """A depth-6 tree holds at most 32 open leaves (the depth-5 nodes), so INITIAL_SLOTS = 32
    slots suffice: a tree of nearly 64 leaves returns the pool it was given, not a doubled one."""
    rng = np.random.default_rng(9)
    n_rows = 20_000
    X = rng.normal(size=(n_rows, 6))
    stats = np.column_stack([np.sin(3 * X[:, 0]) + X[:, 1] * X[:, 2] + rng.normal(size=n_rows),
                             np.ones(n_rows)])
    bin_mapper = BinMapper(255).fit(X)
    codes = bin_mapper.transform(X, order="C")
    workspace = gradient_workspace(n_rows, 6, 6, 0, 1, bin_mapper.categorical_)
    arrays, _, _, returned = grow_gradient_tree(
        codes, np.asfortranarray(codes), stats, np.arange(n_rows, dtype=np.int32),
        bin_mapper.n_bins_, bin_mapper.categorical_, np.arange(6, dtype=np.int32),
        GradientParams(DEPTHWISE, 6, 0, 1.0, 0.0, 0.0, 0.0, 1, 0.0, 1.0).typed(),
        CategoryRegularization(), 0, workspace)
    assert (arrays[0] == LEAF).sum() > 56
    assert len(workspace[0]) == INITIAL_SLOTS == 32
    assert returned[0] is workspace[0]


def _grow_with_layout(codes, stats, bin_mapper, n_channels, grow_policy=DEPTHWISE):
    """A depth-6 tree (or 40 loss-guided leaves) grown on histograms of n_channels (the
    grower takes counts when it is given them, and needs them only for min_samples_leaf > 1
    or sets of categories)."""
    n_rows, n_features = codes.shape
    max_depth, max_leaves = (6, 0) if grow_policy == DEPTHWISE else (0, 40)
    workspace = (empty_histograms(INITIAL_SLOTS, n_features, n_channels),
                 empty_histograms(n_rows // CHUNK_ROWS, n_features, n_channels))
    arrays, partition, node_start, _ = grow_gradient_tree(
        codes, np.asfortranarray(codes), stats, np.arange(n_rows, dtype=np.int32),
        bin_mapper.n_bins_, bin_mapper.categorical_, np.arange(n_features, dtype=np.int32),
        GradientParams(grow_policy, max_depth, max_leaves, 1.0, 0.0, 0.0, 0.0, 1, 0.0,
                       1.0).typed(), CategoryRegularization(), 0, workspace)
    return arrays, partition, node_start


def _chunked_node_data(hessian, seed, exact_sums):
    """Rows enough for chunked nodes (their sums rounded in another order than a subtracted
    sibling's), features with few distinct values (empty bins in most nodes) and NaN; with
    exact_sums, gradients and hessians multiples of 1/8, whose sums are exact in any order."""
    rng = np.random.default_rng(seed)
    n_rows = 3 * CHUNK_ROWS
    X = np.round(rng.normal(size=(n_rows, 5)), 1)
    X[rng.uniform(size=X.shape) < 0.05] = np.nan
    finite = np.nan_to_num(X)
    stats = np.column_stack([
        np.sin(2 * finite[:, 0]) + finite[:, 1] * finite[:, 2] + rng.normal(size=n_rows),
        hessian(rng, n_rows)])
    if exact_sums:
        stats = np.round(8 * stats) / 8
    bin_mapper = BinMapper(255).fit(X)
    return bin_mapper.transform(X, order="C"), stats, bin_mapper


@pytest.mark.parametrize("grow_policy", [DEPTHWISE, LOSSGUIDE])
def test_with_exact_sums_trees_without_counts_equal_the_trees_with_counts(grow_policy):
    """Unit hessians (squared error: the hessian is the count) and exact sums: scans that tell
    an empty side by its hessian and the larger side by its hessian pick the splits the
    counts pick, thresholds and missing sides included."""
    codes, stats, bin_mapper = _chunked_node_data(lambda rng, n: np.ones(n), 10, True)
    counted = _grow_with_layout(codes, stats, bin_mapper, COUNTED_CHANNELS, grow_policy)
    uncounted = _grow_with_layout(codes, stats, bin_mapper, GRADIENT_CHANNELS, grow_policy)
    assert (counted[0][0] == LEAF).sum() > 30
    for a, b in zip(counted[0] + counted[1:], uncounted[0] + uncounted[1:], strict=True):
        assert np.array_equal(a, b)


def test_trees_without_counts_split_the_training_rows_as_the_trees_with_counts():
    """Varying hessians, rounded sums: a subtracted histogram's empty bin holds the rounding
    of its parent's sum, not 0, and the larger side by count and by hessian may differ, so a
    threshold within bins of no row of its node and the side of missing values a node has not
    seen may differ (here one of each); the partition of the rows, and so every node's rows,
    and the leaf values may not, and the gains only by rounding."""
    codes, stats, bin_mapper = _chunked_node_data(lambda rng, n: rng.uniform(0.05, 0.25, n), 10,
                                                  False)
    counted = _grow_with_layout(codes, stats, bin_mapper, COUNTED_CHANNELS)
    uncounted = _grow_with_layout(codes, stats, bin_mapper, GRADIENT_CHANNELS)
    feature, _, _, left, right, value, gain, n_samples, _ = range(9)
    assert (counted[0][feature] == LEAF).sum() > 30
    for field in (feature, left, right, value, n_samples):
        assert np.array_equal(counted[0][field], uncounted[0][field])
    np.testing.assert_allclose(uncounted[0][gain], counted[0][gain], rtol=1e-12)
    assert np.array_equal(counted[1], uncounted[1])
    assert np.array_equal(counted[2], uncounted[2])


@pytest.mark.parametrize("n_channels", [GRADIENT_CHANNELS, COUNTED_CHANNELS])
def test_a_tree_reads_only_its_features_used_bins_of_a_slot(n_channels):
    """Builds, merges and subtractions touch a feature's used bins only (0..n_bins-1 and the
    missing bin, histogram.py), the scans and left sums read no other: a pool of NaN grows the
    same trees as a pool of zeros. Features of 2 to 255 bins, missing values, categorical
    columns, and trees on other column subsets in the
    same pool (colsample_bytree: a slot's feature k then has another bin count); set splits in
    the counted layout, which they need."""
    rng = np.random.default_rng(11)
    n_rows = 3000
    X = np.column_stack([rng.normal(size=n_rows), rng.integers(0, 2, n_rows),
                         rng.integers(0, 5, n_rows), rng.integers(0, 60, n_rows),
                         rng.integers(0, 12, n_rows), rng.integers(0, 30, n_rows)]).astype(float)
    X[rng.uniform(size=X.shape) < 0.05] = np.nan
    counted = n_channels == COUNTED_CHANNELS  # set splits need the counts
    categorical = np.array([False, False, counted, False, counted, False])
    bin_mapper = BinMapper(255, categorical=categorical).fit(X)
    assert len(set(bin_mapper.n_bins_)) == 6
    codes = bin_mapper.transform(X, order="C")
    signal = np.nan_to_num(X[:, 0]) + (np.nan_to_num(X[:, 2]) % 2) - np.nan_to_num(X[:, 4]) / 6
    stats = np.column_stack([signal + 0.3 * rng.normal(size=n_rows),
                             rng.uniform(0.5, 1.5, n_rows)]).astype(np.float32)
    params = GradientParams(DEPTHWISE, 6, 0, 1.0, 0.0, 0.0, 0.0,
                            2 if counted else 1, 0.0, 1.0).typed()

    def grow(features, pool):
        workspace = (pool, gradient_workspace(n_rows, len(features), 6, 0, params.min_samples_leaf,
                                              bin_mapper.categorical_)[1])
        arrays, _, _, workspace = grow_gradient_tree(
            codes, np.asfortranarray(codes), stats, np.arange(n_rows, dtype=np.int32),
            bin_mapper.n_bins_, bin_mapper.categorical_, np.array(features, dtype=np.int32),
            params, CategoryRegularization(), 0, workspace)
        return arrays, workspace[0]

    nan_pool = np.full(empty_histograms(INITIAL_SLOTS, 4, n_channels).shape, np.nan)
    for features in ([0, 1, 2, 3], [2, 3, 4, 5], [0, 1, 4, 5]):
        zero_pool = np.zeros_like(nan_pool)
        grown, nan_pool = grow(features, nan_pool)  # the pool the last tree left
        expected, _ = grow(features, zero_pool)
        assert (grown[0] == LEAF).sum() > 20
        for a, b in zip(grown, expected, strict=True):
            assert np.array_equal(a, b)
