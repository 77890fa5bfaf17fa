"""Best split of a node from one feature's histogram: the gain formulas.

Every criterion scores a node by a quantity S(node) whose increase is the split gain,
    gain = S(left) + S(right) - S(parent),
so that one scan serves all of them:

- NEWTON (channels g, h): S = T_alpha(G)^2 / (H + lambda), T_alpha the soft threshold; the
  structure score of the CSC411 GBT notes ("The Structure Score"), without the factor 1/2.
  A squared-error regression tree is the case g = -w*y, h = w, lambda = 0: the gain is the
  decrease of the weighted sum of squares (Straka, "Regression Decision Trees").
- GINI (channels = class weights w_k, W = sum_k w_k): S = (sum_k w_k^2) / W, so the gain is
  the decrease of W * gini = W - sum_k w_k^2 / W (Straka, "Classification Decision Trees").
- ENTROPY: S = sum_k w_k log(w_k / W) = -W * H(p), the decrease of W * entropy.
- SUMMED_NEWTON (K outputs, channels (g_k, h_k, w y_k^2) each): S = sum_k T_alpha(G_k)^2 /
  (H_k + lambda), NEWTON's score summed over the outputs: one partition shared by K weighted
  least-squares fits (g_k = -w_k y_k, h_k = w_k), the gain the decrease of their summed
  weighted sum of squares; each leaf holds K values -G_k / H_k (AdaBoost.MH's trees,
  ensembles.methods.adaboost_rounds).
"""

import numpy as np

from ensembles.engine.binning import MISSING_BIN
from ensembles.engine.borrowing import borrowing, borrowing_numpy_errors
from ensembles.engine.cart_histogram import (
    SQUARED_ERROR_STATS,
    SQUARED_TARGET_CHANNEL,
    TWO_CLASS_COUNT_CHANNEL,
    occupied_bins,
)
from ensembles.engine.histogram import COUNT_CHANNEL, GRADIENT_CHANNEL, HESSIAN_CHANNEL

NEWTON = np.int64(0)  # typed, as every integer kernels pass each other (node_arrays)
GINI = np.int64(1)
ENTROPY = np.int64(2)
SUMMED_NEWTON = np.int64(3)
TIE_TOLERANCE = 1e-10
EMPTY_HESSIAN = 1e-10  # a side without counts holding at most this share of its node's
# hessian is empty: a subtracted histogram's empty bins held up to 1.7e-16 of it (100k rows)
SMALLEST_HESSIAN = float(np.finfo(np.float64).tiny)  # a side of no hessian is empty too
LEFT_COUNT_ROW = np.int64(2)  # the row of scan holding the left counts (scans with counts)
LEFT_HESSIAN_ROW = np.int64(1)  # and the left hessians, the count of a scan without counts


@borrowing
def improves(gain, best_gain):
    """True when a feature's `gain` beats the best of the features before it by more than the
    rounding of a histogram sum (TIE_TOLERANCE, relative): two features inducing the same
    partition tie and the first scanned wins, however the rows' order rounded their sums.
    (Thresholds of one feature induce different partitions; they compare strictly.)"""
    if best_gain == -np.inf:
        return gain > -np.inf
    return gain > best_gain + TIE_TOLERANCE * abs(best_gain)


@borrowing
def soft_threshold(value, alpha):
    """T_alpha(x) = sign(x) * max(|x| - alpha, 0): the L1 shrinkage of the gradient sum."""
    if value > alpha:
        return value - alpha
    if value < -alpha:
        return value + alpha
    return 0.0


@borrowing
def node_score(sums, n_stats, criterion, reg_lambda, reg_alpha):
    """S(node) of the module docstring, from the node's channel sums."""
    if criterion == SUMMED_NEWTON:
        score = 0.0
        for first in range(0, n_stats, SQUARED_ERROR_STATS):
            score += _newton_score(sums[first + GRADIENT_CHANNEL], sums[first + HESSIAN_CHANNEL],
                                   reg_lambda, reg_alpha)
        return score
    if criterion == NEWTON:
        denominator = sums[HESSIAN_CHANNEL] + reg_lambda
        if denominator <= 0.0:
            return 0.0
        shrunk = soft_threshold(sums[GRADIENT_CHANNEL], reg_alpha)
        return shrunk * shrunk / denominator
    total = 0.0
    for k in range(n_stats):
        total += sums[k]
    score = 0.0
    for k in range(n_stats):
        if sums[k] > 0.0:
            if criterion == GINI:
                score += sums[k] * sums[k]
            else:
                score += sums[k] * np.log(sums[k] / total)
    if criterion == GINI and score > 0.0:
        return score / total  # one division: (sum_k w_k^2) / W
    return score


@borrowing
def node_weight(sums, n_stats, criterion):
    """Hessian sum H for NEWTON, sum_k H_k for SUMMED_NEWTON, total sample weight W for the
    impurity criteria."""
    if criterion == NEWTON:
        return sums[HESSIAN_CHANNEL]
    total = 0.0
    if criterion == SUMMED_NEWTON:
        for first in range(0, n_stats, SQUARED_ERROR_STATS):
            total += sums[first + HESSIAN_CHANNEL]
        return total
    for k in range(n_stats):
        total += sums[k]
    return total


@borrowing
def node_impurity(sums, n_stats, criterion):
    """Per-unit-weight impurity (gini, entropy, or variance when a w*y^2 channel exists; for
    SUMMED_NEWTON the outputs' summed weighted sums of squares over their summed weights).

    Returns +inf when it cannot be told (NEWTON without the third channel), so that such a
    node is never declared pure.
    """
    weight = node_weight(sums, n_stats, criterion)
    if criterion == SUMMED_NEWTON:
        squares = 0.0
        for first in range(0, n_stats, SQUARED_ERROR_STATS):
            squares += sums[first + SQUARED_TARGET_CHANNEL] - _newton_score(
                sums[first + GRADIENT_CHANNEL], sums[first + HESSIAN_CHANNEL], 0.0, 0.0)
        return max(squares / weight, 0.0) if weight > 0.0 else 0.0
    if criterion == NEWTON:
        if n_stats < 3:
            return np.inf
        mean = -sums[GRADIENT_CHANNEL] / weight
        return max(sums[SQUARED_TARGET_CHANNEL] / weight - mean * mean, 0.0)
    impurity = 0.0
    for k in range(n_stats):
        p = sums[k] / weight
        if p > 0.0:
            impurity += p * (1.0 - p) if criterion == GINI else -p * np.log(p)
    return impurity


@borrowing
def leaf_value(sums, n_stats, criterion, reg_lambda, reg_alpha, out):
    """NEWTON: w* = -T_alpha(G) / (H + lambda) (CSC411, optimal leaf weight), SUMMED_NEWTON: that
    of each output k; else p_k = w_k / W, with the class weights w_k >= 0 by definition (a
    weight found by subtracting a sibling's can round to -1e-16: it is 0)."""
    if criterion == SUMMED_NEWTON:
        for k in range(n_stats // SQUARED_ERROR_STATS):
            first = k * SQUARED_ERROR_STATS
            denominator = sums[first + HESSIAN_CHANNEL] + reg_lambda
            shrunk = soft_threshold(sums[first + GRADIENT_CHANNEL], reg_alpha)
            out[k] = -shrunk / denominator if denominator > 0 else 0.0
        return
    if criterion == NEWTON:
        denominator = sums[HESSIAN_CHANNEL] + reg_lambda
        shrunk = soft_threshold(sums[GRADIENT_CHANNEL], reg_alpha)
        out[0] = -shrunk / denominator if denominator > 0 else 0.0
        return
    total = 0.0
    for k in range(n_stats):
        out[k] = max(sums[k], 0.0)
        total += out[k]
    for k in range(n_stats):
        out[k] /= total


@borrowing
def leaf_outputs(n_stats, criterion):
    """How many values a leaf holds: 1 for NEWTON, one per output for SUMMED_NEWTON, one per
    class for the impurity criteria."""
    if criterion == NEWTON:
        return 1
    if criterion == SUMMED_NEWTON:
        return n_stats // SQUARED_ERROR_STATS
    return n_stats


@borrowing
def best_threshold(hist, n_bins, parent, criterion, reg_lambda, reg_alpha,
                   min_samples_leaf, min_child_weight, left, right):
    """Scan one feature's histogram for the split "code <= b" of largest gain.

    Missing values (bin MISSING_BIN) are tried on both sides, as XGBoost and LightGBM do;
    b = n_bins - 1 is the split of the non-missing rows from the missing ones (as XGBoost).
    Returns (gain, b, missing_left); gain is -inf when no threshold is admissible.
    `left` and `right` are scratch vectors of length n_stats + 1.
    """
    n_stats = parent.shape[0] - 1
    parent_score = node_score(parent, n_stats, criterion, reg_lambda, reg_alpha)
    best_gain = -np.inf
    best_bin = np.int64(-1)
    best_missing_left = False
    left[:] = 0.0
    last_bin = n_bins if hist[MISSING_BIN, n_stats] > 0.0 else n_bins - 1
    for b in range(last_bin):
        if hist[b, n_stats] == 0.0:
            continue
        for channel in range(n_stats + 1):
            left[channel] += hist[b, channel]
        gain, missing_left = best_missing_side(hist, parent, parent_score, criterion,
                                                reg_lambda, reg_alpha, min_samples_leaf,
                                                min_child_weight, left, right)
        if gain > best_gain:
            best_gain = gain
            best_bin = b
            best_missing_left = missing_left
    if best_bin >= 0 and hist[MISSING_BIN, n_stats] == 0.0:
        best_missing_left = _larger_side_is_left(hist, best_bin, n_stats, parent[n_stats])
    return best_gain, best_bin, best_missing_left


@borrowing
def best_missing_side(hist, parent, parent_score, criterion, reg_lambda, reg_alpha,
                       min_samples_leaf, min_child_weight, left, right):
    """Gain of the split whose non-missing left side sums to `left`, with the missing rows sent
    right, or left when there are any: returns the better (gain, missing_left); -inf if neither
    side-pair satisfies min_samples_leaf and min_child_weight. Element loops, no temporaries:
    this runs for every bin of every feature of every node."""
    n_stats = parent.shape[0] - 1
    missing = hist[MISSING_BIN]
    min_count = max(min_samples_leaf, 1)
    best_gain = -np.inf
    best_missing_left = False
    for missing_left in (False, True):
        if missing_left:
            if missing[n_stats] == 0.0:
                break
            for channel in range(n_stats + 1):
                left[channel] += missing[channel]
        for channel in range(n_stats + 1):
            right[channel] = parent[channel] - left[channel]
        if (left[n_stats] >= min_count and right[n_stats] >= min_count
                and node_weight(left, n_stats, criterion) >= min_child_weight
                and node_weight(right, n_stats, criterion) >= min_child_weight):
            gain = (node_score(left, n_stats, criterion, reg_lambda, reg_alpha)
                    + node_score(right, n_stats, criterion, reg_lambda, reg_alpha)
                    - parent_score)
            if gain > best_gain:
                best_gain = gain
                best_missing_left = missing_left
        if missing_left:
            for channel in range(n_stats + 1):
                left[channel] -= missing[channel]
    return best_gain, best_missing_left


@borrowing
def _larger_side_is_left(hist, threshold_bin, n_stats, n_node):
    """Without missing values in training, NaN later follows the child with more samples."""
    n_left = 0.0
    for b in range(threshold_bin + 1):
        n_left += hist[b, n_stats]
    return n_left >= n_node - n_left


@borrowing
def best_two_class_threshold(hist, bins, n_occupied, n_bins, parent, criterion,
                             min_samples_leaf, min_child_weight, scan):
    """best_threshold for GINI or ENTROPY on a two-class (w_0, w_1, count) histogram: the same
    gains in the same floating-point order, about 4x faster (it runs for every drawn feature of
    every node of every forest tree). bins[:n_occupied] are the non-missing bins holding rows,
    increasing (best_threshold skips the others). Three passes over the candidate thresholds:

        1. running left sums, as best_threshold forms them (missing rows added, then removed)
           -> scan[0:3, i] (missing rows right), scan[3:6, i] (missing rows left)
        2. both side-pairs' gains -> scan[6, i], scan[7, i]  (no dependency: vectorized)
        3. the first largest gain, missing-right preferred on ties, as best_threshold

    scan: float64 scratch (8, N_BIN_SLOTS)."""
    parent_score = _two_class_score(parent[0], parent[1], criterion)
    min_count = max(min_samples_leaf, 1)
    has_missing = hist[MISSING_BIN, TWO_CLASS_COUNT_CHANNEL] > 0.0
    last_bin = n_bins if has_missing else n_bins - 1
    n_candidates = _running_left_sums(hist, bins, n_occupied, last_bin, has_missing,
                                      TWO_CLASS_COUNT_CHANNEL, scan)
    _split_gains(scan[0], scan[1], scan[2], n_candidates, parent, parent_score, criterion,
                 min_count, min_child_weight, scan[6])
    if has_missing:
        _split_gains(scan[3], scan[4], scan[5], n_candidates, parent, parent_score, criterion,
                     min_count, min_child_weight, scan[7])
    return _first_best_candidate(scan, bins, n_candidates, has_missing,
                                 parent[TWO_CLASS_COUNT_CHANNEL], LEFT_COUNT_ROW)


@borrowing
def _first_best_candidate(scan, bins, n_candidates, has_missing, parent_n, count_row):
    """Pass 3 of the vectorized scans: (gain, bin, missing_left) of the first largest gain,
    missing-right preferred on ties, as best_threshold; without missing rows in the node,
    missing values go to the larger side (_larger_side_is_left, from pass 1's left counts in
    scan[count_row]).
    The largest gain is found first (_largest_gain), then the first candidate holding it."""
    best_gain = _largest_gain(scan[6], n_candidates)
    if has_missing:
        best_gain = max(best_gain, _largest_gain(scan[7], n_candidates))
    if best_gain == -np.inf:
        return best_gain, -1, False
    best = 0
    best_missing_left = False
    for i in range(n_candidates):
        if scan[6, i] == best_gain:
            best = i
            break
        if has_missing and scan[7, i] == best_gain:
            best = i
            best_missing_left = True
            break
    if not has_missing:
        best_missing_left = scan[count_row, best] >= parent_n - scan[count_row, best]
    return best_gain, bins[best], best_missing_left


@borrowing
def _largest_gain(gains, n_candidates):
    """max(gains[:n_candidates]), -inf if none, NaN never: four running maxima, so that the
    comparisons do not wait for each other (this pass: 0.5 cycles a candidate, against 3.0
    for one running comparison per candidate; measured)."""
    largest_0 = largest_1 = largest_2 = largest_3 = -np.inf
    n_quads = n_candidates - n_candidates % 4
    for i in range(0, n_quads, 4):
        largest_0 = gains[i] if gains[i] > largest_0 else largest_0
        largest_1 = gains[i + 1] if gains[i + 1] > largest_1 else largest_1
        largest_2 = gains[i + 2] if gains[i + 2] > largest_2 else largest_2
        largest_3 = gains[i + 3] if gains[i + 3] > largest_3 else largest_3
    for i in range(n_quads, n_candidates):
        largest_0 = gains[i] if gains[i] > largest_0 else largest_0
    return max(max(largest_0, largest_1), max(largest_2, largest_3))


@borrowing
def _running_left_sums(hist, bins, n_occupied, last_bin, has_missing, count_channel, scan):
    """Pass 1 of best_two_class_threshold and best_newton_threshold: the left side's sums of
    channels 0, 1 and count_channel (w_0, w_1 or g, h; the count, or h again without counts)
    at each candidate bin below last_bin, without and with the missing rows; returns the
    number of candidates.
    The missing rows are added to and then removed from the running sums, as in
    best_missing_side, so that every sum is rounded as there."""
    missing_0 = hist[MISSING_BIN, 0]
    missing_1 = hist[MISSING_BIN, 1]
    missing_n = hist[MISSING_BIN, count_channel]
    left_0 = 0.0
    left_1 = 0.0
    left_n = 0.0
    n_candidates = 0
    for i in range(n_occupied):
        b = bins[i]
        if b >= last_bin:
            break
        left_0 += hist[b, 0]
        left_1 += hist[b, 1]
        left_n += hist[b, count_channel]
        scan[0, i] = left_0
        scan[1, i] = left_1
        scan[2, i] = left_n
        if has_missing:
            left_0 += missing_0
            left_1 += missing_1
            left_n += missing_n
            scan[3, i] = left_0
            scan[4, i] = left_1
            scan[5, i] = left_n
            left_0 -= missing_0
            left_1 -= missing_1
            left_n -= missing_n
        n_candidates += 1
    return n_candidates


@borrowing
def _split_gains(lefts_0, lefts_1, lefts_n, n_candidates, parent, parent_score, criterion,
                 min_count, min_child_weight, gains):
    """Pass 2 of best_two_class_threshold: gains[i] = _two_class_split_gain of left side i."""
    if criterion == GINI:
        _gini_split_gains(lefts_0, lefts_1, lefts_n, n_candidates, parent[0], parent[1],
                          parent[TWO_CLASS_COUNT_CHANNEL], parent_score, min_count,
                          min_child_weight, gains)
        return
    for i in range(n_candidates):
        gains[i] = _two_class_split_gain(parent[0], parent[1], parent[TWO_CLASS_COUNT_CHANNEL],
                                         parent_score,
                                         lefts_0[i], lefts_1[i], lefts_n[i], criterion,
                                         min_count, min_child_weight)


@borrowing_numpy_errors
def _gini_split_gains(lefts_0, lefts_1, lefts_n, n_candidates, parent_0, parent_1, parent_n,
                      parent_score, min_count, min_child_weight, gains):
    """_split_gains for GINI without a branch, so that the loop is vectorized: each side's
    (sum_k w_k^2) / W is computed, then kept only where the squares are positive (the numpy
    error model lets the discarded 0 / 0 be NaN instead of raising), the same operations as
    _two_class_score. Two divisions a candidate, not one a class and side: the loop is
    bound by division throughput (1.1 against 2.2 ns a candidate, measured)."""
    for i in range(n_candidates):
        left_0 = lefts_0[i]
        left_1 = lefts_1[i]
        left_n = lefts_n[i]
        right_0 = parent_0 - left_0
        right_1 = parent_1 - left_1
        right_n = parent_n - left_n
        left_total = 0.0 + left_0 + left_1
        right_total = 0.0 + right_0 + right_1
        left_squares = 0.0 + left_0 * left_0 if left_0 > 0.0 else 0.0
        left_squares = left_squares + left_1 * left_1 if left_1 > 0.0 else left_squares
        right_squares = 0.0 + right_0 * right_0 if right_0 > 0.0 else 0.0
        right_squares = right_squares + right_1 * right_1 if right_1 > 0.0 else right_squares
        left_score = left_squares / left_total if left_squares > 0.0 else 0.0
        right_score = right_squares / right_total if right_squares > 0.0 else 0.0
        admissible = ((left_n >= min_count) & (right_n >= min_count)
                      & (left_total >= min_child_weight) & (right_total >= min_child_weight))
        gains[i] = left_score + right_score - parent_score if admissible else -np.inf


@borrowing
def _two_class_score(weight_0, weight_1, criterion):
    """node_score for GINI or ENTROPY from the scalar class weights w_0, w_1."""
    total = 0.0 + weight_0 + weight_1
    score = 0.0
    if weight_0 > 0.0:
        if criterion == GINI:
            score += weight_0 * weight_0
        else:
            score += weight_0 * np.log(weight_0 / total)
    if weight_1 > 0.0:
        if criterion == GINI:
            score += weight_1 * weight_1
        else:
            score += weight_1 * np.log(weight_1 / total)
    if criterion == GINI and score > 0.0:
        return score / total
    return score


@borrowing
def two_class_missing_side(left, missing, parent, parent_score, criterion, min_samples_leaf,
                           min_child_weight):
    """best_missing_side for two classes: the non-missing left side's sums `left` and the
    missing rows' `missing`, (w_0, w_1, count) each; the same gains in the same
    floating-point order (_two_class_split_gain), without the loops over a run-time number of
    channels."""
    min_count = max(min_samples_leaf, 1)
    parent_0, parent_1 = parent[0], parent[1]
    parent_n = parent[TWO_CLASS_COUNT_CHANNEL]
    left_0, left_1, left_n = left[0], left[1], left[TWO_CLASS_COUNT_CHANNEL]
    gain = _two_class_split_gain(parent_0, parent_1, parent_n, parent_score, left_0, left_1,
                                 left_n, criterion, min_count, min_child_weight)
    if missing[TWO_CLASS_COUNT_CHANNEL] == 0.0:
        return gain, False
    missing_gain = _two_class_split_gain(
        parent_0, parent_1, parent_n, parent_score, left_0 + missing[0], left_1 + missing[1],
        left_n + missing[TWO_CLASS_COUNT_CHANNEL], criterion, min_count, min_child_weight)
    if missing_gain > gain:
        return missing_gain, True
    return gain, False


@borrowing
def _two_class_split_gain(parent_0, parent_1, parent_n, parent_score, left_0, left_1, left_n,
                          criterion, min_count, min_child_weight):
    """best_missing_side's gain of one side-pair for two classes; -inf when inadmissible."""
    right_0 = parent_0 - left_0
    right_1 = parent_1 - left_1
    right_n = parent_n - left_n
    if not (left_n >= min_count and right_n >= min_count
            and 0.0 + left_0 + left_1 >= min_child_weight
            and 0.0 + right_0 + right_1 >= min_child_weight):
        return -np.inf
    return (_two_class_score(left_0, left_1, criterion)
            + _two_class_score(right_0, right_1, criterion) - parent_score)


@borrowing
def best_newton_threshold(hist, n_bins, parent, reg_lambda, reg_alpha, min_samples_leaf,
                          min_child_weight, bins, scan):
    """best_threshold for NEWTON on a (g, h, count, 0) or a (g, h) histogram: the same gains
    in the same floating-point order, in the three passes of best_two_class_threshold
    (running left sums, vectorized gains, first largest), 1.3x faster than one pass (it runs
    for every feature of every node of every gradient tree: a quarter of a 500-feature fit).
    bins: int32 scratch (N_BIN_SLOTS); scan: float64 scratch (8, N_BIN_SLOTS).

    Without counts (min_samples_leaf <= 1), every bin is a candidate, as in XGBoost (those
    of exact zeros skipped: _newton_left_sums): an empty bin's left sums are those of the
    bin before it, so the first largest gain is still at an occupied bin, and a side is empty
    when its hessian is below EMPTY_HESSIAN of the node's, or than SMALLEST_HESSIAN (a
    subtracted histogram's empty bin holds the rounding of the parent's sum, not 0; the side
    is then inadmissible, as a side of no row); the missing rows' bin, likewise. The larger
    side, for missing values when the node has none, is the one of more hessian."""
    parent_h = parent[HESSIAN_CHANNEL]
    if hist.shape[1] > COUNT_CHANNEL:
        count_channel = COUNT_CHANNEL
        min_count = float(max(min_samples_leaf, 1))
        has_missing = hist[MISSING_BIN, COUNT_CHANNEL] > 0.0
        last_bin = n_bins if has_missing else n_bins - 1
        n_occupied = occupied_bins(hist, last_bin, COUNT_CHANNEL, bins)
        n_candidates = _running_left_sums(hist, bins, n_occupied, last_bin, has_missing,
                                          count_channel, scan)
        count_row = LEFT_COUNT_ROW
    else:
        count_channel = np.int64(HESSIAN_CHANNEL)
        min_count = max(EMPTY_HESSIAN * parent_h, SMALLEST_HESSIAN)
        has_missing = hist[MISSING_BIN, HESSIAN_CHANNEL] > min_count
        last_bin = n_bins if has_missing else n_bins - 1
        n_candidates = _newton_left_sums(hist, last_bin, has_missing, bins, scan)
        count_row = LEFT_HESSIAN_ROW
    return _best_newton_candidate(scan, bins, n_candidates, has_missing, parent, count_channel,
                                  count_row, min_count, reg_lambda, reg_alpha, min_child_weight)


@borrowing
def best_newton_threshold_at(hist, bins, n_occupied, n_bins, parent, reg_lambda, reg_alpha,
                             min_samples_leaf, min_child_weight, scan):
    """best_newton_threshold of a histogram summed from a node's rows whose occupied
    non-missing bins are bins[:n_occupied], increasing (the small nodes of
    gradient_grower): only they are candidates, in both layouts. An empty bin's left sums
    are those of the occupied bin before it, so no split is lost; without missing rows the
    candidates' sums are those of best_newton_threshold. (With missing rows it adds and
    removes them at every bin below last_bin, here at the occupied ones only: the sums may
    differ in the last bit.) A side is empty by the same rule (counts, or a hessian below
    EMPTY_HESSIAN of the node's)."""
    if hist.shape[1] > COUNT_CHANNEL:
        count_channel = COUNT_CHANNEL
        min_count = float(max(min_samples_leaf, 1))
        has_missing = hist[MISSING_BIN, COUNT_CHANNEL] > 0.0
    else:
        count_channel = np.int64(HESSIAN_CHANNEL)
        min_count = max(EMPTY_HESSIAN * parent[HESSIAN_CHANNEL], SMALLEST_HESSIAN)
        has_missing = hist[MISSING_BIN, HESSIAN_CHANNEL] > min_count
    last_bin = n_bins if has_missing else n_bins - 1
    n_candidates = _running_left_sums(hist, bins, n_occupied, last_bin, has_missing,
                                      count_channel, scan)
    return _best_newton_candidate(scan, bins, n_candidates, has_missing, parent, count_channel,
                                  LEFT_COUNT_ROW, min_count, reg_lambda, reg_alpha,
                                  min_child_weight)


@borrowing
def _best_newton_candidate(scan, bins, n_candidates, has_missing, parent, count_channel,
                           count_row, min_count, reg_lambda, reg_alpha, min_child_weight):
    """Passes 2 and 3 of best_newton_threshold over pass 1's candidates in scan (their left
    sizes in scan[count_row]): (gain, bin, missing_left) of the first largest gain."""
    parent_g = parent[GRADIENT_CHANNEL]
    parent_h = parent[HESSIAN_CHANNEL]
    parent_n = parent[count_channel]
    parent_score = _newton_score(parent_g, parent_h, reg_lambda, reg_alpha)
    _newton_split_gains(scan[0], scan[1], scan[count_row], n_candidates, parent_g, parent_h,
                        parent_n, parent_score, reg_lambda, reg_alpha, min_count,
                        min_child_weight, scan[6])
    if has_missing:
        _newton_split_gains(scan[3], scan[4], scan[count_row + 3], n_candidates, parent_g,
                            parent_h, parent_n, parent_score, reg_lambda, reg_alpha, min_count,
                            min_child_weight, scan[7])
    return _first_best_candidate(scan, bins, n_candidates, has_missing, parent_n, count_row)


@borrowing
def _newton_left_sums(hist, last_bin, has_missing, bins, scan):
    """Pass 1 of best_newton_threshold without counts: _running_left_sums over bins
    0..last_bin - 1 in the same order, without the count rows (the count is the hessian,
    scan[LEFT_HESSIAN_ROW]: a store less a bin, which bounds this loop with the additions);
    returns the number of candidates, their bins in `bins`. Without missing rows in the node,
    only bin 0 and the bins holding a nonzero g or h are candidates: a bin of exact zeros
    adds nothing, so its left sums, hence its gains, are those of the candidate before it,
    which the first largest gain prefers, and dropping it changes no split. (With missing
    rows every bin stays: adding and removing them rounds the running sums.) A node of a few
    rows has a few occupied bins: the gain pass (two divisions a candidate) and the search
    then run over those only. Branch-free: every bin is written at the next candidate's
    place, which only a kept bin keeps; bin 0 before the loop, so that the loop tests no bin
    index, and the missing rows' loop apart (every bin a candidate there)."""
    left_g = 0.0
    left_h = 0.0
    if has_missing:
        missing_g = hist[MISSING_BIN, GRADIENT_CHANNEL]
        missing_h = hist[MISSING_BIN, HESSIAN_CHANNEL]
        for b in range(last_bin):
            left_g += hist[b, GRADIENT_CHANNEL]
            left_h += hist[b, HESSIAN_CHANNEL]
            bins[b] = b
            scan[0, b] = left_g
            scan[1, b] = left_h
            left_g += missing_g
            left_h += missing_h
            scan[3, b] = left_g
            scan[4, b] = left_h
            left_g -= missing_g
            left_h -= missing_h
        return last_bin
    if last_bin <= 0:
        return 0
    left_g += hist[0, GRADIENT_CHANNEL]  # bin 0 is a candidate: before the loop, which then
    left_h += hist[0, HESSIAN_CHANNEL]  # tests no bin index
    bins[0] = 0
    scan[0, 0] = left_g
    scan[1, 0] = left_h
    n_candidates = 1
    for b in range(1, last_bin):
        grad = hist[b, GRADIENT_CHANNEL]
        hess = hist[b, HESSIAN_CHANNEL]
        left_g += grad
        left_h += hess
        bins[n_candidates] = b
        scan[0, n_candidates] = left_g
        scan[1, n_candidates] = left_h
        n_candidates += (grad != 0.0) | (hess != 0.0)
    return n_candidates


@borrowing_numpy_errors
def _newton_split_gains(lefts_g, lefts_h, lefts_n, n_candidates, parent_g, parent_h, parent_n,
                        parent_score, reg_lambda, reg_alpha, min_count, min_child_weight,
                        gains):
    """Pass 2 of best_newton_threshold: gains[i] = score(left) + score(right) - score(parent)
    of left side i (-inf when a side has fewer than min_count rows or less hessian than
    min_child_weight), as best_missing_side computes it for NEWTON. No branch, so that the
    loop is vectorized: the soft threshold is max(G - alpha, 0) + min(G + alpha, 0) (the same
    value), and each score T(G)^2 / (H + lambda) is kept only where H + lambda > 0 (the numpy
    error model lets the discarded division by zero pass)."""
    for i in range(n_candidates):
        left_g = lefts_g[i]
        left_h = lefts_h[i]
        left_n = lefts_n[i]
        right_g = parent_g - left_g
        right_h = parent_h - left_h
        right_n = parent_n - left_n
        left_shrunk = max(left_g - reg_alpha, 0.0) + min(left_g + reg_alpha, 0.0)
        right_shrunk = max(right_g - reg_alpha, 0.0) + min(right_g + reg_alpha, 0.0)
        left_denominator = left_h + reg_lambda
        right_denominator = right_h + reg_lambda
        left_score = (left_shrunk * left_shrunk / left_denominator if left_denominator > 0.0
                      else 0.0)
        right_score = (right_shrunk * right_shrunk / right_denominator
                       if right_denominator > 0.0 else 0.0)
        admissible = ((left_n >= min_count) & (right_n >= min_count)
                      & (left_h >= min_child_weight) & (right_h >= min_child_weight))
        gains[i] = left_score + right_score - parent_score if admissible else -np.inf


@borrowing
def _newton_score(grad, hess, reg_lambda, reg_alpha):
    """node_score for NEWTON from scalar sums G, H."""
    denominator = hess + reg_lambda
    if denominator <= 0.0:
        return 0.0
    shrunk = soft_threshold(grad, reg_alpha)
    return shrunk * shrunk / denominator
