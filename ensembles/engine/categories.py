"""Splits of a categorical feature into two sets of categories.

A categorical feature's code is its category, 0..MAX_CATEGORY (binning), and a split sends the
codes of a set left. The set is 256 bits (SET_WORDS words of 32): bit c for category c, bit
MISSING_BIN for the missing values. Categories without rows at the node (absent there, or never
seen in training) follow the missing values; without missing values in the node both go with
the larger child, as a numerical split sends NaN.

Which set: the node's categories are put in an order and the best split "the first i of the
order go left" is scanned as a numerical feature's thresholds are (splitting), missing values
tried on both sides. The orders:

- gradient trees (NEWTON): increasing G_c / (H_c + cat_smooth), i.e. decreasing smoothed leaf
  weight, as LightGBM (cat_smooth) and HistGradientBoosting (MIN_CAT_SUPPORT) sort; for squared
  error and cat_smooth = 0 this is the order of the category means, in which the best
  partition is a prefix (Fisher 1958), otherwise the standard heuristic. Regularized as
  LightGBM's FindBestThresholdCategoricalInner (CategoryRegularization): a category with fewer
  than cat_smooth rows at the node is not sorted in and follows the missing values; the split
  gain counts cat_l2 on top of lambda in the children's scores (not the parent's, as
  LightGBM); each side holds at least min_data_per_group rows; one side holds at most
  max_cat_threshold of the sorted categories (prefixes and suffixes of the order, as
  LightGBM's scans in both directions); a feature of fewer than max_cat_to_onehot categories
  is split one category against the rest (XGBoost's max_cat_to_onehot rule), unsmoothed and
  unfiltered as both references do;
- CART, two classes: increasing share of class 1; regression: decreasing mean target. The best
  split is a prefix of that order for Gini, entropy and squared error (Breiman et al. 1984,
  CART), so the scan is exact (a test checks it against an exhaustive search); it is not
  regularized: a smoothed order would make the exact search inexact, and the forests have no
  lambda to add to (min_samples_leaf bounds their children);
- CART, K > 2 classes: no order is exact (the exact search is over 2^(m-1) - 1 sets), so each
  class k's share gives one order and the best prefix over the K orders is taken; K outputs'
  summed squared errors (SUMMED_NEWTON) likewise, each output's mean G_k / H_k one order;
- extra trees: the categories in a random order, cut at a random place (a random set, as
  Geurts et al. 2006 draw one for a categorical attribute).
"""

from typing import NamedTuple

import numpy as np
from numba import njit

from ensembles.engine.binning import MISSING_BIN, N_BIN_SLOTS
from ensembles.engine.borrowing import borrowing
from ensembles.engine.cart_histogram import SQUARED_ERROR_STATS, list_set_bits, occupied_bins
from ensembles.engine.histogram import (
    COUNT_CHANNEL,
    GRADIENT_CHANNEL,
    GRADIENT_CHANNELS,
    HESSIAN_CHANNEL,
)
from ensembles.engine.merge_sort import sort_by_key
from ensembles.engine.random_draws import below, shuffle_steps
from ensembles.engine.splitting import (
    NEWTON,
    SUMMED_NEWTON,
    best_newton_threshold,
    best_threshold,
    node_score,
)

CATEGORY_SET = np.int64(-1)  # threshold_bin of a split on a set of categories
SET_WORDS = N_BIN_SLOTS // 32
SET_WORDS_64 = N_BIN_SLOTS // 64  # a set as 64-bit words (random_category_set)
ONE_VS_REST_BINS = np.int64(2)  # the category's row and an empty one (_best_one_vs_rest)


class CategoryRegularization(NamedTuple):
    """How a gradient tree's set splits are regularized (module docstring; LightGBM's names).
    Floats all, so that numba compiles one type. The defaults regularize nothing."""

    cat_smooth: float = 0.0
    cat_l2: float = 0.0
    min_data_per_group: float = 0.0
    max_cat_threshold: float = float(N_BIN_SLOTS)
    max_cat_to_onehot: float = 0.0


@njit(cache=True, nogil=True, inline="always")
def in_set(bits, code):
    """Whether code is in the set `bits`: bit code % 32 of the uint32 word code // 32 (a
    category set has SET_WORDS words)."""
    return (bits[code >> 5] >> np.uint32(code & 31)) & np.uint32(1) != 0


@njit(cache=True, nogil=True, inline="always")
def add_to_set(bits, code):
    """Put code into the set `bits` (in_set's layout)."""
    bits[code >> 5] |= np.uint32(1) << np.uint32(code & 31)


@njit(cache=True, nogil=True, inline="always")
def remove_from_set(bits, code):
    """Take code out of the set `bits` (in_set's layout)."""
    bits[code >> 5] &= ~(np.uint32(1) << np.uint32(code & 31))


@njit(cache=True, nogil=True)
def category_code(x):
    """A raw categorical value as its code: x itself for a whole number in 0..MISSING_BIN - 1,
    MISSING_BIN for NaN or any other value (unknown: it follows the missing values)."""
    if x >= 0.0 and x < MISSING_BIN and x == np.floor(x):
        return np.int64(x)
    return np.int64(MISSING_BIN)


@njit(cache=True, nogil=True)
def empty_set_scratch(n_channels):
    """Scratch of one scan: (sorted histogram, order, keys, candidate set, and the sort's
    scratch keys and order)."""
    return (np.zeros((N_BIN_SLOTS, n_channels)), np.zeros(N_BIN_SLOTS, dtype=np.int32),
            np.zeros(N_BIN_SLOTS), np.zeros(SET_WORDS, dtype=np.uint32), np.zeros(N_BIN_SLOTS),
            np.zeros(N_BIN_SLOTS, dtype=np.int32))


@borrowing
def clear_set_scratch(scratch):
    """Zero the scratch of a scan, as empty_set_scratch makes it."""
    sorted_hist, order, keys, bits, sort_keys, sort_order = scratch
    sorted_hist[:] = 0.0
    order[:] = 0
    keys[:] = 0.0
    bits[:] = 0
    sort_keys[:] = 0.0
    sort_order[:] = 0


@borrowing
def _sorted_histogram(hist, m, scratch):
    """Sort the order by the keys (scratch: see empty_set_scratch; stable: ties keep the
    smaller code first) and copy the categories' rows into the sorted histogram's rows 0..m-1
    in that order, the missing row at MISSING_BIN and zeros between: a numerical histogram
    whose thresholds are the order's prefixes."""
    sorted_hist, order, keys, _, key_scratch, order_scratch = scratch
    sort_by_key(keys, order, m, key_scratch, order_scratch)
    sorted_hist[:] = 0.0
    for channel in range(hist.shape[1]):
        for i in range(m):
            sorted_hist[i, channel] = hist[order[i], channel]
        sorted_hist[MISSING_BIN, channel] = hist[MISSING_BIN, channel]


@borrowing
def _set_of_prefix(order, m, n_left, missing_left, bits):
    """bits = {order[i] : i < n_left}, plus the missing bin and every category absent from
    order[:m] when missing_left."""
    fill = np.uint32(0xFFFFFFFF) if missing_left else np.uint32(0)
    bits[:] = fill
    for i in range(m):
        if i < n_left:
            add_to_set(bits, order[i])
        else:
            remove_from_set(bits, order[i])


@borrowing
def best_newton_set(hist, n_bins, sums, reg_lambda, reg_alpha, min_samples_leaf,
                    min_child_weight, regularization, scratch, bins, scan):
    """Best set split of one feature of a gradient tree (module docstring); returns
    (gain, missing_left) and leaves the set in scratch[3]; gain -inf when none is admissible.
    regularization: a CategoryRegularization; bins, scan: best_newton_threshold's scratch."""
    if n_bins < regularization.max_cat_to_onehot:
        return _best_one_vs_rest(hist, n_bins, sums, reg_lambda, reg_alpha, min_samples_leaf,
                                 min_child_weight, scratch, bins, scan)
    sorted_hist, order, keys, bits, _, _ = scratch
    smooth = regularization.cat_smooth
    m = occupied_bins(hist, n_bins, COUNT_CHANNEL, order)
    n_sorted = np.int64(0)  # typed: a literal 0 is another signature of the kernels
    for i in range(m):
        c = order[i]
        if hist[c, COUNT_CHANNEL] >= smooth:
            order[n_sorted] = c
            denominator = hist[c, HESSIAN_CHANNEL] + smooth
            keys[n_sorted] = hist[c, GRADIENT_CHANNEL] / denominator if denominator > 0.0 else 0.0
            n_sorted += 1
    _sorted_histogram(hist, n_sorted, scratch)
    for c in range(n_bins):  # the rare categories' rows join the missing values'
        if 0.0 < hist[c, COUNT_CHANNEL] < smooth:
            for channel in range(hist.shape[1]):
                sorted_hist[MISSING_BIN, channel] += hist[c, channel]
    n_scanned = _capped_prefixes(sorted_hist, n_sorted, regularization.max_cat_threshold)
    cat_lambda = reg_lambda + regularization.cat_l2
    gain, last_left, missing_left = best_newton_threshold(
        sorted_hist, n_scanned, sums, cat_lambda, reg_alpha,
        max(min_samples_leaf, np.int64(regularization.min_data_per_group)), min_child_weight,
        bins, scan)
    if n_scanned < n_sorted and last_left >= (n_scanned - 1) // 2:
        last_left += n_sorted - n_scanned  # the middle row or after: the prefix this long
    _set_of_prefix(order, n_sorted, last_left + 1, missing_left, bits)
    # the parent's score with lambda alone, as LightGBM's gain_shift: cat_l2 penalizes the split
    return (gain + node_score(sums, GRADIENT_CHANNELS, NEWTON, cat_lambda, reg_alpha)
            - node_score(sums, GRADIENT_CHANNELS, NEWTON, reg_lambda, reg_alpha)), missing_left


@borrowing
def _capped_prefixes(sorted_hist, n_sorted, max_cat_threshold):
    """Rows of the sorted histogram whose thresholds are the splits sending at most
    max_cat_threshold categories one way: the first k and the last k rows (k = the cap) kept,
    the rows between summed into one, so that a threshold cuts a prefix of length <= k or a
    suffix of length <= k. Returns the number of rows scanned (n_sorted when 2k >= n_sorted:
    every prefix or its complement holds at most k)."""
    if 2.0 * max_cat_threshold >= n_sorted:
        return n_sorted
    cap = np.int64(max_cat_threshold)
    for i in range(cap + 1, n_sorted - cap):
        for channel in range(sorted_hist.shape[1]):
            sorted_hist[cap, channel] += sorted_hist[i, channel]
    for i in range(cap):
        for channel in range(sorted_hist.shape[1]):
            sorted_hist[cap + 1 + i, channel] = sorted_hist[n_sorted - cap + i, channel]
    return 2 * cap + 1


@borrowing
def _best_one_vs_rest(hist, n_bins, sums, reg_lambda, reg_alpha, min_samples_leaf,
                      min_child_weight, scratch, bins, scan):
    """XGBoost's one-hot split (EnumerateOneHot): each category of the node alone against the
    others, the missing values on either side; returns (gain, missing_left), the set (the
    category, with the missing values and absent categories when they go left) in
    scratch[3]. Each is best_newton_threshold's scan of a histogram holding the category in
    row 0 and nothing in row 1 (the other categories are the parent's rest). Without missing
    values in the node they follow the larger side."""
    sorted_hist, order, _, bits, _, _ = scratch
    m = occupied_bins(hist, n_bins, COUNT_CHANNEL, order)
    for channel in range(hist.shape[1]):
        sorted_hist[ONE_VS_REST_BINS - 1, channel] = 0.0
        sorted_hist[MISSING_BIN, channel] = hist[MISSING_BIN, channel]
    best_gain = -np.inf
    best = 0
    best_missing_left = np.bool_(False)  # typed: a literal False is another signature
    for i in range(m):
        for channel in range(hist.shape[1]):
            sorted_hist[0, channel] = hist[order[i], channel]
        gain, _, missing_left = best_newton_threshold(
            sorted_hist, ONE_VS_REST_BINS, sums, reg_lambda, reg_alpha, min_samples_leaf,
            min_child_weight, bins, scan)
        if gain > best_gain:
            best_gain = gain
            best = i
            best_missing_left = missing_left
    chosen = order[best]
    order[best] = order[0]
    order[0] = chosen
    _set_of_prefix(order, m, ONE_VS_REST_BINS - 1, best_missing_left, bits)
    return best_gain, best_missing_left


@borrowing
def best_cart_set(hist, n_bins, sums, criterion, min_samples_leaf, min_child_weight, left,
                  right, scratch, best_bits):
    """Best set split of one feature of a CART tree (module docstring); returns
    (gain, missing_left), the set in best_bits. hist channels: the stats, then the count."""
    sorted_hist, order, keys, bits, _, _ = scratch
    n_stats = sums.shape[0] - 1
    n_orders = 1 if criterion == NEWTON or n_stats == 2 else n_stats
    if criterion == SUMMED_NEWTON:
        n_orders = n_stats // SQUARED_ERROR_STATS
    best_gain = -np.inf
    best_missing_left = np.bool_(False)  # typed: a literal False is another signature
    for k in range(n_orders):
        m = occupied_bins(hist, n_bins, n_stats, order)
        for i in range(m):
            c = order[i]
            if criterion == NEWTON:  # g = -w y, h = w: G / H is minus the mean target
                keys[i] = hist[c, GRADIENT_CHANNEL] / hist[c, HESSIAN_CHANNEL]
            elif criterion == SUMMED_NEWTON:  # output k's
                first = k * SQUARED_ERROR_STATS
                keys[i] = (hist[c, first + GRADIENT_CHANNEL]
                           / hist[c, first + HESSIAN_CHANNEL])
            else:
                weight = 0.0
                for s in range(n_stats):
                    weight += hist[c, s]
                keys[i] = hist[c, 1 if n_stats == 2 else k] / weight
        _sorted_histogram(hist, m, scratch)
        gain, last_left, missing_left = best_threshold(
            sorted_hist, m, sums, criterion, 0.0, 0.0, min_samples_leaf, min_child_weight,
            left, right)
        if gain > best_gain:
            best_gain = gain
            best_missing_left = missing_left
            _set_of_prefix(order, m, last_left + 1, missing_left, best_bits)
    return best_gain, best_missing_left


@borrowing
def random_category_set(occupied, categories, chosen, state):
    """Extra trees: a uniformly random set of a node's m categories, the set bits of
    `occupied` (SET_WORDS_64 words; the missing bin's bit clear), put in `chosen` (the same
    layout): its size uniform in 1..m - 1, its members the first of a random order
    (shuffle_steps) of the categories listed in increasing order in `categories` (scratch).
    state: the grower's random_draws state. Returns m; with m < 2 no set is drawn."""
    m = np.int64(0)
    for word in range(SET_WORDS_64):
        m = list_set_bits(occupied[word], np.int64(64 * word), categories, m)
    if m < 2:
        return m
    n_left = 1 + below(state, m - 1)
    shuffle_steps(categories[:m], np.int64(0), n_left, state)
    for word in range(SET_WORDS_64):
        chosen[word] = 0
    for i in range(n_left):
        category = np.uint64(categories[i])
        chosen[category >> np.uint64(6)] |= np.uint64(1) << (category & np.uint64(63))
    return m


@borrowing
def set_of_chosen(occupied, chosen, missing_left, bits):
    """bits (in_set's layout) = the categories of `chosen` (random_category_set's layout) and,
    when missing_left, the missing bin and every category not in `occupied` (the module's
    rule: absent categories follow the missing values)."""
    for word in range(SET_WORDS_64):
        left = ~(occupied[word] & ~chosen[word]) if missing_left else chosen[word]
        bits[2 * word] = np.uint32(left & np.uint64(0xFFFFFFFF))
        bits[2 * word + 1] = np.uint32(left >> np.uint64(32))


@borrowing
def set_sums(hist, n_bins, bits, out):
    """out = the channel sums of the histogram rows whose code is in the set (a set split's
    left child, from its parent's histogram of the split feature): its used bins, categories
    0..n_bins-1 and MISSING_BIN (histogram.py), the only ones its codes take."""
    out[:] = 0.0
    for b in range(N_BIN_SLOTS):
        if (b < n_bins or b == MISSING_BIN) and in_set(bits, b):
            for channel in range(out.shape[0]):
                out[channel] += hist[b, channel]
