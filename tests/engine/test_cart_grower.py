"""The CART grower's workspace: trees grown one after the other in one workspace equal trees
grown each in a fresh one (cart_grower.cart_workspace)."""

import numpy as np
import pytest

from ensembles.engine.binning import BinMapper
from ensembles.engine.cart_grower import BinnedData, CartParams, cart_workspace, grow_cart_tree
from ensembles.engine.categories import CATEGORY_SET
from ensembles.engine.splitting import ENTROPY, GINI, NEWTON


def _data():
    """Two numerical features and a categorical one of 12 categories, three classes."""
    rng = np.random.default_rng(5)
    X = np.column_stack([rng.normal(size=600), rng.normal(size=600),
                         rng.integers(0, 12, size=600).astype(float)])
    y = ((X[:, 0] > 0).astype(int) + (X[:, 2] % 3 == 0)).astype(int)
    bin_mapper = BinMapper(64, categorical=np.array([False, False, True])).fit(X)
    return bin_mapper.transform(X, order="C"), y, bin_mapper


def _grow(codes, stats, rows, bin_mapper, criterion, max_leaves, random_splits, seed,
          workspace):
    data = BinnedData(codes, stats, bin_mapper.n_bins_, bin_mapper.bin_upper_values_,
                      bin_mapper.categorical_)
    params = CartParams(max_features=2, criterion=criterion, max_leaves=max_leaves,
                        min_child_weight=0.0, random_splits=random_splits)
    return grow_cart_tree(data, rows, params.typed(), seed, workspace)


@pytest.mark.parametrize(("criterion", "max_leaves", "random_splits"), [
    (GINI, 0, False), (ENTROPY, 12, False), (GINI, 0, True), (NEWTON, 0, False)])
def test_a_reused_workspace_grows_the_trees_of_fresh_ones(criterion, max_leaves,
                                                          random_splits):
    """Three trees on other rows and seeds, grown in turn in one workspace (each over the
    last one's nodes, partition and scratch), equal the same trees grown in fresh workspaces,
    array for array; the categorical feature makes set splits."""
    codes, y, bin_mapper = _data()
    if criterion == NEWTON:
        target = y - 1.0
        stats = np.column_stack([-target, np.ones_like(target), target ** 2])
    else:
        stats = np.eye(3)[y]
    rng = np.random.default_rng(0)
    shared = cart_workspace(len(y), codes.shape[1], stats.shape[1], criterion, 0,
                            max_leaves, bin_mapper.categorical_)
    made_set_split = False
    for seed in range(3):
        rows = np.sort(rng.choice(len(y), size=400 - 100 * seed, replace=False)).astype(np.int32)
        fresh = cart_workspace(len(y), codes.shape[1], stats.shape[1], criterion, 0,
                               max_leaves, bin_mapper.categorical_)
        reused = _grow(codes, stats, rows, bin_mapper, criterion, max_leaves, random_splits,
                       seed, shared)
        alone = _grow(codes, stats, rows, bin_mapper, criterion, max_leaves, random_splits,
                      seed, fresh)
        for a, b in zip(reused, alone, strict=True):
            assert np.array_equal(a, b)
        made_set_split |= bool(np.any(reused[1] == CATEGORY_SET))
    assert made_set_split


def test_a_workspace_too_small_is_refused():
    codes, y, bin_mapper = _data()
    small = cart_workspace(100, codes.shape[1], 3, GINI, 0, 0, bin_mapper.categorical_)
    with pytest.raises(ValueError, match="workspace"):
        _grow(codes, np.eye(3)[y], np.arange(len(y), dtype=np.int32), bin_mapper, GINI, 0,
              False, 0, small)
