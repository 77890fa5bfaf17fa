import numpy as np
import pytest

from ensembles.engine.binning import BinMapper
from ensembles.engine.gradient_grower import (
    DEPTHWISE,
    LOSSGUIDE,
    gradient_workspace,
    grow_gradient_tree,
)
from ensembles.engine.tree import PARTITION_BLOCK, Tree


@pytest.mark.parametrize(("grow_policy", "max_depth", "max_leaves"),
                         [(DEPTHWISE, 4, 0), (LOSSGUIDE, 0, 9)])
def test_training_rows_get_the_leaf_values_of_a_tree_walk(grow_policy, max_depth, max_leaves):
    """add_by_partition (the grower's partition, the last split's rows routed by the split)
    adds to each training row exactly the value a walk of its codes reaches."""
    rng = np.random.default_rng(6)
    n_rows = 2 * PARTITION_BLOCK + 900  # blocks that cut across the partition's ranges
    X = rng.normal(size=(n_rows, 4))
    X[rng.uniform(size=X.shape) < 0.1] = np.nan
    finite = np.nan_to_num(X)
    grad = np.where(np.isnan(X[:, 0]), 1.0, np.sin(3 * finite[:, 0]) + finite[:, 1] ** 2)
    stats = np.column_stack([grad + 0.1 * rng.normal(size=n_rows), np.ones(n_rows)])
    bin_mapper = BinMapper(64).fit(X)
    codes = bin_mapper.transform(X, order="C")
    columns = np.asfortranarray(codes)
    arrays, partition, node_start = grow_gradient_tree(
        codes, columns, stats, np.arange(n_rows, dtype=np.int32), bin_mapper.n_bins_,
        bin_mapper.categorical_, np.arange(4, dtype=np.int32), grow_policy, max_depth,
        max_leaves, 1.0, 0.0, 0.0, 1.0, 1, 0.0, 1.0, 0,
        gradient_workspace(n_rows, 4, max_depth, max_leaves))
    tree = Tree.from_grown(arrays, bin_mapper, 0.3)
    assert (node_start < 0).any()  # the last splits' rows were not partitioned
    if grow_policy == DEPTHWISE:
        assert tree.depth == max_depth
    else:
        assert tree.n_leaves == max_leaves
    by_partition = np.full((n_rows, 1), 0.5)
    tree.add_by_partition(partition, node_start, columns, by_partition)
    assert np.array_equal(by_partition, 0.5 + tree.predict_binned(codes))
