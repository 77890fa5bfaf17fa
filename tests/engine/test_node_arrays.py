"""The growth rules both growers share (node_arrays), checked by hand and on grown trees."""

import numpy as np
import pytest
from numba import njit

from ensembles.engine.binning import BinMapper
from ensembles.engine.cart_grower import BinnedData, CartParams, cart_workspace, grow_cart_tree
from ensembles.engine.categories import CategoryRegularization
from ensembles.engine.gradient_grower import (
    DEPTHWISE,
    GradientParams,
    gradient_workspace,
    grow_gradient_tree,
)
from ensembles.engine.node_arrays import max_leaf_count, may_split
from ensembles.engine.splitting import GINI
from ensembles.engine.tree import LEAF


@pytest.mark.parametrize(("n_rows", "depth", "max_depth", "min_samples_split",
                          "min_samples_leaf", "expected"), [
    (2, 9, 0, 2, 1, True),     # max_depth 0: no limit (XGBoost)
    (2, 3, 3, 2, 1, False),    # at max_depth
    (2, 2, 3, 2, 1, True),
    (1, 0, 0, 0, 0, False),    # a split needs a row on each side, whatever min_samples_leaf
    (5, 0, 0, 2, 3, False),    # 2 * min_samples_leaf rows (scikit-learn)
    (6, 0, 0, 2, 3, True),
    (6, 0, 0, 7, 3, False),    # min_samples_split
])
def test_may_split_by_hand(n_rows, depth, max_depth, min_samples_split, min_samples_leaf,
                           expected):
    assert may_split(n_rows, depth, max_depth, min_samples_split, min_samples_leaf) == expected


def test_max_leaf_count_by_hand():
    assert max_leaf_count(100, 0, 0) == 100
    assert max_leaf_count(100, 3, 0) == 8
    assert max_leaf_count(100, 3, 5) == 5
    assert max_leaf_count(0, 3, 0) == 1
    assert max_leaf_count(100, 40, 0) == 100


def _data():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 3))
    y = (X[:, 0] * X[:, 1] + 0.3 * rng.normal(size=400) > 0).astype(int)
    bin_mapper = BinMapper(32).fit(X)
    return bin_mapper.transform(X, order="C"), y, bin_mapper


def _cart(max_depth, min_samples_leaf):
    codes, y, bin_mapper = _data()
    workspace = cart_workspace(len(y), codes.shape[1], 2, GINI, max_depth, 0,
                               bin_mapper.categorical_)
    data = BinnedData(codes, np.eye(2)[y], bin_mapper.n_bins_, bin_mapper.bin_upper_values_,
                      bin_mapper.categorical_)
    params = CartParams(max_features=3, criterion=GINI, max_depth=max_depth,
                        min_samples_leaf=min_samples_leaf, min_child_weight=0.0)
    return grow_cart_tree(data, np.arange(len(y), dtype=np.int32), params.typed(), 0, workspace)


def test_cart_max_depth_zero_is_no_limit_as_in_the_gradient_grower():
    """Both growers read max_depth = 0 as XGBoost does: no limit (the CART grower once read
    it as a single leaf, a value the estimators never pass)."""
    unlimited = _cart(0, 1)
    assert len(unlimited[0]) > 2 ** 4
    for mine, deep in zip(unlimited, _cart(60, 1), strict=True):
        assert np.array_equal(mine, deep)


@pytest.mark.parametrize("grower", ["cart", "gradient"])
def test_min_samples_leaf_zero_grows_the_tree_of_one(grower):
    """A child holds at least one row in both growers: min_samples_leaf 0 acts as 1."""
    if grower == "cart":
        zero, one = _cart(6, 0), _cart(6, 1)
    else:
        codes, y, bin_mapper = _data()
        stats = np.column_stack([0.5 - y, np.full(len(y), 0.25)])

        def grow(min_samples_leaf):
            arrays, _, _, _ = grow_gradient_tree(
                codes, np.asfortranarray(codes), stats, np.arange(len(y), dtype=np.int32),
                bin_mapper.n_bins_, bin_mapper.categorical_, np.arange(3, dtype=np.int32),
                GradientParams(DEPTHWISE, 6, 0, 0.0, 0.0, 0.0, 0.0, min_samples_leaf, 0.0,
                               1.0).typed(),
                CategoryRegularization(), 0,
                gradient_workspace(len(y), 3, 6, 0, min_samples_leaf, bin_mapper.categorical_))
            return arrays

        zero, one = grow(0), grow(1)
    assert min(n for n, left in zip(zero[7], zero[3], strict=True) if left < 0) >= 1
    for a, b in zip(zero, one, strict=True):
        assert np.array_equal(a, b)


@njit
def _scribble(n_bytes):
    """Allocate, fill and free n_bytes in numba's allocator, so that the next uninitialised
    arrays likely reuse dirty memory."""
    junk = np.empty(n_bytes, dtype=np.uint8)
    junk[:] = 0xA5
    return junk.sum()


def test_node_arrays_hold_only_set_entries_although_they_start_uninitialised():
    """empty_nodes leaves every entry unset, start_tree sets the root and record_split each
    child: a tree grown over dirty memory equals one grown before it, and each leaf is a plain
    leaf (no feature, no children, bin 0, no gain)."""
    first = _cart(0, 1)
    _scribble(1 << 24)
    second = _cart(0, 1)
    for a, b in zip(first, second, strict=True):
        assert np.array_equal(a, b)
    feature, threshold_bin, missing_left, left, right, _, gain = second[:7]
    leaves = feature == LEAF
    assert 2 * leaves.sum() - 1 == len(feature) > 2 ** 4
    assert (left[leaves] == LEAF).all() and (right[leaves] == LEAF).all()
    assert (threshold_bin[leaves] == 0).all() and not missing_left[leaves].any()
    assert (gain[leaves] == 0.0).all()
