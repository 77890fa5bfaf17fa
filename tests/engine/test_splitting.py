import numpy as np
import pytest

from ensembles.engine.binning import MISSING_BIN, N_BIN_SLOTS
from ensembles.engine.cart_histogram import occupied_bins
from ensembles.engine.splitting import (
    ENTROPY,
    GINI,
    NEWTON,
    SUMMED_NEWTON,
    best_missing_side,
    best_newton_threshold,
    best_newton_threshold_at,
    best_threshold,
    best_two_class_threshold,
    leaf_value,
    node_score,
    two_class_missing_side,
)


def _histogram(codes, stats):
    hist = np.zeros((N_BIN_SLOTS, stats.shape[1] + 1))
    for code, row in zip(codes, stats, strict=True):
        hist[code, :-1] += row
        hist[code, -1] += 1
    return hist


def _scan(codes, stats, n_bins, criterion, reg_lambda=0.0, reg_alpha=0.0, min_samples_leaf=1,
          min_child_weight=0.0):
    hist = _histogram(codes, stats)
    parent = hist.sum(axis=0)
    scratch = np.zeros((2, stats.shape[1] + 1))
    return best_threshold(hist, n_bins, parent, criterion, reg_lambda, reg_alpha,
                          min_samples_leaf, min_child_weight, scratch[0], scratch[1])


def test_gini_gain_of_a_known_split_by_hand():
    # bins 0,1 hold class 0 twice and class 1 once; bins 2,3 hold class 1 three times.
    codes = np.array([0, 0, 1, 2, 3, 3])
    y = np.array([0, 0, 1, 1, 1, 1])
    stats = np.eye(2)[y]
    gain, threshold_bin, _ = _scan(codes, stats, 4, GINI)
    # parent W*gini = 6 - (2^2 + 4^2)/6; best split {0} | {1,2,3}: children 2*0 and 4*0
    assert threshold_bin == 0
    assert gain == pytest.approx(6 - (4 + 16) / 6 - 0.0)


def test_newton_gain_and_leaf_weight_by_hand():
    g = np.array([-2.0, -1.0, 1.0, 3.0])
    h = np.array([1.0, 2.0, 1.0, 0.5])
    codes = np.arange(4)
    reg_lambda, reg_alpha = 1.0, 0.5

    def score(G, H):
        shrunk = np.sign(G) * max(abs(G) - reg_alpha, 0.0)
        return shrunk**2 / (H + reg_lambda)

    candidates = [score(g[:b + 1].sum(), h[:b + 1].sum())
                  + score(g[b + 1:].sum(), h[b + 1:].sum()) - score(g.sum(), h.sum())
                  for b in range(3)]
    gain, threshold_bin, _ = _scan(codes, np.column_stack([g, h]), 4, NEWTON, reg_lambda, reg_alpha)
    assert threshold_bin == int(np.argmax(candidates))
    assert gain == pytest.approx(max(candidates))
    out = np.zeros(1)
    leaf_value(np.array([g.sum(), h.sum(), 4.0]), 2, NEWTON, reg_lambda, reg_alpha, out)
    assert out[0] == pytest.approx(-(g.sum() - reg_alpha) / (h.sum() + reg_lambda))


def test_summed_newton_is_twice_the_classes_summed_two_class_gini_by_hand():
    """K outputs of labels y_k in {-1, +1} with weights w_k (AdaBoost.MH's pairs): the gain of
    sum_k G_k^2 / H_k is twice that of the K two-class Ginis of (W-_k, W+_k) summed, at the same
    threshold; each leaf holds the K weighted means of y_k."""
    rng = np.random.default_rng(0)
    codes = np.arange(6)
    signs = np.where(rng.random((6, 3)) < 0.5, -1.0, 1.0)
    weight = rng.uniform(0.5, 2.0, (6, 3))
    stats = np.stack([-weight * signs, weight, weight], axis=2).reshape(6, 9)

    def summed_gini_gain(b):
        parts = [(signs[:b + 1], weight[:b + 1]), (signs[b + 1:], weight[b + 1:]), (signs, weight)]
        scores = [sum(_two_class_score(w[y[:, k] < 0, k].sum(), w[y[:, k] > 0, k].sum())
                      for k in range(3)) for y, w in parts]
        return scores[0] + scores[1] - scores[2]

    gain, threshold_bin, _ = _scan(codes, stats, 6, SUMMED_NEWTON)
    candidates = [summed_gini_gain(b) for b in range(5)]
    assert threshold_bin == int(np.argmax(candidates))
    assert gain == pytest.approx(2 * max(candidates))
    out = np.zeros(3)
    leaf_value(stats.sum(axis=0), 9, SUMMED_NEWTON, 0.0, 0.0, out)
    assert out == pytest.approx((weight * signs).sum(axis=0) / weight.sum(axis=0))


def _two_class_score(weight_0, weight_1):
    """(w_0^2 + w_1^2) / (w_0 + w_1), the score of the Gini gain (module splitting)."""
    return (weight_0**2 + weight_1**2) / (weight_0 + weight_1)


def test_missing_values_are_sent_to_the_side_that_gains_most():
    # class 1 at low codes and among the missing: missing must join the left side
    codes = np.array([0, 0, 0, 1, 1, 1, MISSING_BIN, MISSING_BIN])
    y = np.array([1, 1, 1, 0, 0, 0, 1, 1])
    gain, threshold_bin, missing_left = _scan(codes, np.eye(2)[y], 2, GINI)
    assert (threshold_bin, missing_left) == (0, True)
    assert gain == pytest.approx(8 - (25 + 9) / 8)


def test_min_samples_leaf_and_min_child_weight_restrict_thresholds():
    codes = np.arange(6)
    stats = np.column_stack([np.array([-5.0, 1, 1, 1, 1, 1]), np.ones(6)])
    assert _scan(codes, stats, 6, NEWTON)[1] == 0
    assert _scan(codes, stats, 6, NEWTON, min_samples_leaf=2)[1] >= 1
    assert _scan(codes, stats, 6, NEWTON, min_child_weight=3.0)[1] >= 2
    assert _scan(codes, stats, 6, NEWTON, min_samples_leaf=4)[0] == -np.inf


def test_gini_score_is_weighted_gini_decrease():
    sums = np.array([3.0, 1.0, 4.0])
    weight = 4.0
    gini = 1 - (0.75**2 + 0.25**2)
    assert weight - node_score(sums, 2, GINI, 0.0, 0.0) == pytest.approx(weight * gini)


@pytest.mark.parametrize("seed", range(6))
def test_newton_scan_equals_the_generic_scan_bit_for_bit(seed):
    """best_newton_threshold is best_threshold(NEWTON) with scalar sums: same gain, bin, side."""
    rng = np.random.default_rng(seed)
    n_bins = int(rng.integers(2, 256))
    codes = rng.integers(0, n_bins, size=400)
    codes[rng.uniform(size=400) < [0.0, 0.1, 0.5][seed % 3]] = MISSING_BIN
    stats = np.column_stack([rng.normal(size=400), rng.uniform(0.1, 2.0, size=400)])
    hist = _histogram(codes, stats)
    parent = hist.sum(axis=0)
    for reg_lambda, reg_alpha, min_samples_leaf, min_child_weight in [
            (1.0, 0.0, 1, 1.0), (0.0, 0.5, 5, 0.0), (3.0, 2.0, 20, 10.0)]:
        scratch = np.zeros((2, 3))
        generic = best_threshold(hist, n_bins, parent, NEWTON, reg_lambda, reg_alpha,
                                 min_samples_leaf, min_child_weight, scratch[0], scratch[1])
        scalar = best_newton_threshold(hist, n_bins, parent, reg_lambda, reg_alpha,
                                       min_samples_leaf, min_child_weight,
                                       np.empty(N_BIN_SLOTS, dtype=np.int32),
                                       np.empty((8, N_BIN_SLOTS)))
        assert scalar == generic


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("counted", [False, True])
def test_a_small_nodes_scan_at_its_occupied_bins_finds_the_full_scans_split(seed, counted):
    """best_newton_threshold_at (a node of a few rows: its occupied bins the only candidates)
    finds best_newton_threshold's split on the same histogram summed from the rows, in the
    counted (g, h, count, 0) and the (g, h) layouts: bit for bit without missing rows. With
    them the same rows go left, the missing ones to the same side, the gain the same to
    rounding: the full scan adds and removes the missing rows at every bin, and that
    rounding can make an empty bin after the best occupied one its first largest gain."""
    rng = np.random.default_rng(seed)
    n_rows = int(rng.integers(2, 65))
    n_bins = int(rng.integers(2, 256))
    codes = rng.integers(0, n_bins, size=n_rows)
    with_missing = seed % 2 == 1
    if with_missing:
        codes[rng.uniform(size=n_rows) < 0.3] = MISSING_BIN
    stats = np.column_stack([rng.normal(size=n_rows), rng.uniform(0.1, 2.0, size=n_rows)])
    counts = _histogram(codes, stats)
    hist = (np.column_stack([counts, np.zeros(N_BIN_SLOTS)]) if counted
            else np.ascontiguousarray(counts[:, :2]))
    parent = hist.sum(axis=0)
    occupied = np.unique(codes[codes != MISSING_BIN])
    bins = np.zeros(N_BIN_SLOTS, dtype=np.int32)
    bins[:len(occupied)] = occupied
    for reg_lambda, reg_alpha, min_samples_leaf, min_child_weight in [
            (1.0, 0.0, 1, 0.0), (0.0, 0.5, 1, 1.0), (3.0, 2.0, 3, 0.5)]:
        full = best_newton_threshold(hist, n_bins, parent, reg_lambda, reg_alpha,
                                     min_samples_leaf, min_child_weight,
                                     np.empty(N_BIN_SLOTS, dtype=np.int32),
                                     np.empty((8, N_BIN_SLOTS)))
        at = best_newton_threshold_at(hist, bins, len(occupied), n_bins, parent, reg_lambda,
                                      reg_alpha, min_samples_leaf, min_child_weight,
                                      np.empty((8, N_BIN_SLOTS)))
        if with_missing:  # the same rows left: the full scan's bin or an empty one after it
            assert at[1:] == (occupied[occupied <= full[1]].max(initial=-1), full[2])
            assert at[0] == pytest.approx(full[0], rel=1e-12, abs=1e-300)
        else:
            assert at == full


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("criterion", [GINI, ENTROPY])
def test_two_class_scan_equals_the_generic_scan_bit_for_bit(seed, criterion):
    """best_two_class_threshold is best_threshold(GINI / ENTROPY) over the occupied bins, with
    scalar sums and vectorized gains: same gain, bin and side, with integer weights and with
    weights over six orders of magnitude (whose running sums round)."""
    rng = np.random.default_rng(seed)
    n_bins = int(rng.integers(2, 256))
    codes = rng.integers(0, n_bins, size=400)
    codes[rng.uniform(size=400) < [0.0, 0.1, 0.5][seed % 3]] = MISSING_BIN
    y = (rng.uniform(size=400) < codes / 255).astype(int)
    weight = 10.0 ** rng.uniform(-3, 3, size=400) if seed % 2 else rng.integers(1, 4, 400) * 1.0
    hist = _histogram(codes, np.eye(2)[y] * weight[:, None])
    parent = hist.sum(axis=0)
    bins = np.zeros(N_BIN_SLOTS, dtype=np.int32)
    n_occupied = occupied_bins(hist, n_bins, 2, bins)
    for min_samples_leaf, min_child_weight in [(1, 0.0), (5, 0.0), (20, 30.0)]:
        scratch = np.zeros((2, 3))
        generic = best_threshold(hist, n_bins, parent, criterion, 0.0, 0.0, min_samples_leaf,
                                 min_child_weight, scratch[0], scratch[1])
        scalar = best_two_class_threshold(hist, bins, n_occupied, n_bins, parent, criterion,
                                          min_samples_leaf, min_child_weight,
                                          np.zeros((8, N_BIN_SLOTS)))
        assert scalar == generic


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("criterion", [GINI, ENTROPY])
def test_two_class_missing_side_equals_the_generic_one_bit_for_bit(seed, criterion):
    """two_class_missing_side is best_missing_side for two classes: the same gain and side
    for every left side of a histogram (the cuts of extra trees, a random set's left sums),
    with and without missing rows, integer weights and weights over six orders of magnitude,
    and limits that make some sides, or all, inadmissible."""
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 40, size=300)
    codes[rng.uniform(size=300) < [0.0, 0.1, 0.5][seed % 3]] = MISSING_BIN
    y = (rng.uniform(size=300) < codes / 255).astype(int)
    weight = 10.0 ** rng.uniform(-3, 3, size=300) if seed % 2 else rng.integers(1, 4, 300) * 1.0
    hist = _histogram(codes, np.eye(2)[y] * weight[:, None])
    parent = hist.sum(axis=0)
    parent_score = node_score(parent, 2, criterion, 0.0, 0.0)
    for min_samples_leaf, min_child_weight in [(1, 0.0), (5, 0.0), (20, 30.0), (1, 1e12)]:
        for cut in range(40):
            left = hist[:cut + 1].sum(axis=0)
            generic = best_missing_side(hist, parent, parent_score, criterion, 0.0, 0.0,
                                        min_samples_leaf, min_child_weight, left.copy(),
                                        np.zeros(3))
            two_class = two_class_missing_side(left, hist[MISSING_BIN], parent, parent_score,
                                               criterion, min_samples_leaf, min_child_weight)
            assert two_class == generic


@pytest.mark.parametrize("criterion", [GINI, ENTROPY])
def test_two_class_scan_keeps_the_first_of_tied_thresholds(criterion):
    # classes (0, 0, 1, 1) in bins 0..3: "<= 0" and "<= 2" are mirror images, the same gain
    hist = _histogram(np.arange(4), np.eye(2)[[0, 0, 1, 1]])
    hist[1] = 0.0  # bins 0, 2, 3 occupied: left (1, 0) or (2, 1) of parent (2, 2)
    hist[0] = [1.0, 0.0, 1.0]
    hist[2] = [1.0, 1.0, 2.0]
    parent = hist.sum(axis=0)
    bins = np.zeros(N_BIN_SLOTS, dtype=np.int32)
    n_occupied = occupied_bins(hist, 4, 2, bins)
    gain, threshold_bin, _ = best_two_class_threshold(hist, bins, n_occupied, 4, parent,
                                                      criterion, 1, 0.0,
                                                      np.zeros((8, N_BIN_SLOTS)))
    scratch = np.zeros((2, 3))
    assert (gain, threshold_bin) == best_threshold(hist, 4, parent, criterion, 0.0, 0.0, 1, 0.0,
                                                   scratch[0], scratch[1])[:2]
    assert threshold_bin == 0
