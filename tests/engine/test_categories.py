"""The regularized set split of a gradient tree (categories.best_newton_set) against a search
written here from LightGBM's FindBestThresholdCategoricalInner and XGBoost's EnumerateOneHot:
every admissible candidate tried by hand, on random histograms."""

import numpy as np
import pytest

from ensembles.engine.binning import MISSING_BIN, N_BIN_SLOTS
from ensembles.engine.categories import (
    CategoryRegularization,
    best_newton_set,
    empty_set_scratch,
)
from ensembles.engine.histogram import COUNTED_CHANNELS


def _random_histogram(rng, n_categories):
    """(g, h, count, 0) rows of a node: categories of 1..60 rows (many below cat_smooth), some
    absent, missing values in half of the draws."""
    hist = np.zeros((N_BIN_SLOTS, COUNTED_CHANNELS))
    for c in range(n_categories):
        if rng.random() < 0.15:
            continue
        n = rng.integers(1, 60)
        hist[c, 0] = rng.normal(scale=3.0) + rng.normal() * n * 0.3
        hist[c, 1] = n * rng.uniform(0.1, 0.25)
        hist[c, 2] = n
    if rng.random() < 0.5:
        n = rng.integers(1, 30)
        hist[MISSING_BIN] = (rng.normal() * n * 0.2, n * 0.2, n, 0.0)
    return hist


def _score(g, h, reg_lambda):
    return g * g / (h + reg_lambda)


def _by_hand(hist, n_bins, reg_lambda, min_samples_leaf, min_child_weight, reg):
    """(gain, categories sent left) of the best admissible candidate: LightGBM's rules
    (categories of fewer than cat_smooth rows, with the missing values, on one side; order by
    G / (H + cat_smooth), ties to the smaller code; at most max_cat_threshold categories on
    one side; min_data_per_group rows a side; cat_l2 in the children's scores) or, below
    max_cat_to_onehot categories, XGBoost's one category against the rest."""
    total = hist.sum(axis=0)
    occupied = [c for c in range(n_bins) if hist[c, 2] > 0]
    one_hot = n_bins < reg.max_cat_to_onehot
    if one_hot:
        candidates = [[c] for c in occupied]
        other, kept_lambda, min_rows = hist[MISSING_BIN], reg_lambda, max(min_samples_leaf, 1)
    else:
        kept = [c for c in occupied if hist[c, 2] >= reg.cat_smooth]
        other = hist[MISSING_BIN] + sum((hist[c] for c in occupied if c not in kept),
                                        np.zeros(COUNTED_CHANNELS))
        order = sorted(kept, key=lambda c: (hist[c, 0] / (hist[c, 1] + reg.cat_smooth), c))
        candidates = [order[:k] for k in range(1, len(order) + 1)
                      if min(k, len(order) - k) <= reg.max_cat_threshold]
        kept_lambda = reg_lambda + reg.cat_l2
        min_rows = max(min_samples_leaf, 1, reg.min_data_per_group)
    best = (-np.inf, None)
    for left_set in candidates:
        for other_left in (False, True):
            if other_left and other[2] == 0:
                continue
            left = hist[left_set].sum(axis=0) + (other if other_left else 0.0)
            right = total - left
            if min(left[2], right[2]) < min_rows or min(left[1], right[1]) < min_child_weight:
                continue
            gain = (_score(left[0], left[1], kept_lambda) + _score(right[0], right[1], kept_lambda)
                    - _score(total[0], total[1], reg_lambda))
            if gain > best[0] + 1e-9:
                best = (gain, set(left_set) | (set(occupied) - set(left_set) - set(kept)
                                               if other_left and not one_hot else set()))
    return best


REGULARIZATIONS = [
    CategoryRegularization(),
    CategoryRegularization(cat_smooth=10.0),
    CategoryRegularization(cat_smooth=10.0, cat_l2=10.0, min_data_per_group=100.0,
                           max_cat_threshold=4.0),
    CategoryRegularization(cat_smooth=5.0, max_cat_threshold=1.0),
    CategoryRegularization(max_cat_to_onehot=40.0),
]


@pytest.mark.parametrize("reg", REGULARIZATIONS)
def test_the_regularized_set_split_is_the_best_admissible_candidate(reg):
    rng = np.random.default_rng(3)
    scratch = empty_set_scratch(COUNTED_CHANNELS)
    bins = np.empty(N_BIN_SLOTS, dtype=np.int32)
    scan = np.empty((8, N_BIN_SLOTS))
    n_compared = 0
    for _ in range(60):
        n_bins = np.int64(rng.integers(3, 30))
        hist = _random_histogram(rng, n_bins)
        sums = hist.sum(axis=0)
        gain, _ = best_newton_set(hist, n_bins, sums, 1.0, 0.0, np.int64(1), 0.5, reg, scratch,
                                  bins, scan)
        expected_gain, expected_left = _by_hand(hist, n_bins, 1.0, 1, 0.5, reg)
        if expected_left is None:
            assert gain == -np.inf
            continue
        bits = np.unpackbits(scratch[3].view(np.uint8), bitorder="little")
        ours = {c for c in range(n_bins) if hist[c, 2] > 0 and bits[c]}
        assert gain == pytest.approx(expected_gain, rel=1e-9, abs=1e-9)
        assert ours == expected_left
        n_compared += 1
    assert n_compared > 30
