"""Histograms of the features drawn at a node of a CART tree, built in one pass over its rows.

Layout, `hist[k, bin, channel]` (float64, n_features x HISTOGRAM_BINS x (n_stats + 1)): slot
k holds the histogram of the k-th drawn feature, channels as in histogram.py: the samples'
statistics, then their count in channel n_stats. The statistics are class weights (w_0, ...,
w_{K-1}; two classes: count in TWO_CLASS_COUNT_CHANNEL), or for squared error (g, h, w y^2)
(g and h in histogram's channels, w y^2 in SQUARED_TARGET_CHANNEL, count in channel 3). Its
padding bins are unused (against 4K aliasing, as in histogram.py).

With row-major codes a row's codes are adjacent bytes, so the drawn features are summed row
by row and the row's statistics are read once:

    codes[row, :]  = c_0 c_1 ... c_{F-1}         (uint8, C order)
    hist[k, c_{f_k}] += (stats[row], 1)          for the drawn features f_k, first <= k < last

Each bin adds the node's rows in partition order.

The split scans visit only the occupied bins of a slot, listed from its counts
(`occupied_bins`) or, in a node of a few rows, from the rows' codes (`node_bins`, which leaves
the slot's 256 bins unread). The slots are zero between nodes: `clear_bins` resets the
occupied bins after the scan.
"""


import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from ensembles.engine.binning import MISSING_BIN
from ensembles.engine.borrowing import borrowing
from ensembles.engine.llvm_arrays import unless_jit_disabled
from ensembles.engine.prefetch import PREFETCH_DISTANCE, prefetch

TWO_CLASS_STATS = np.int64(2)  # (w_0, w_1): the statistics of two classes
SQUARED_ERROR_STATS = np.int64(3)  # (g, h, w y^2): a regression tree's statistics
TWO_CLASS_COUNT_CHANNEL = np.int64(2)  # (w_0, w_1, count); typed, as splitting.NEWTON
SQUARED_TARGET_CHANNEL = np.int64(2)  # (g, h, w y^2, count) = (-w y, w, w y^2, count)


@borrowing
def build_drawn_histograms(codes, rows, start, stop, stats, features, first, last, hist):
    """hist[k, b, c] += stats[i, c] over the node rows i with codes[i, features[k]] == b, for
    first <= k < last; channel n_stats counts the rows. The slots must be zero."""
    n_stats = stats.shape[1]
    if n_stats == TWO_CLASS_STATS:
        _add_rows_two_class(codes, rows, start, stop, stats, features, first, last, hist)
    elif n_stats == SQUARED_ERROR_STATS:
        _add_rows(codes, rows, start, stop, stats, features, first, last, hist,
                  SQUARED_ERROR_STATS)
    else:
        _add_rows(codes, rows, start, stop, stats, features, first, last, hist, n_stats)


@njit(inline="always", nogil=True, _nrt=False)
def _add_rows(codes, rows, start, stop, stats, features, first, last, hist, n_stats):
    """The row-by-row sum of build_drawn_histograms, the next rows prefetched (a deep node's
    rows are scattered: each gather would otherwise miss the cache); inlined, so that a
    constant n_stats unrolls the channels (a loop over them set up a vector loop for every
    row and feature). The prefetch is written out here and in _add_rows_two_class: as one
    shared function it made a random forest fit 15% slower (LLVM lays the inlined loop out
    differently; measured)."""
    for position in range(start, stop):
        if position + PREFETCH_DISTANCE < stop:
            ahead = rows[position + PREFETCH_DISTANCE]
            prefetch(codes[ahead], features[first])
            prefetch(stats[ahead], 0)
        row = rows[position]
        for k in range(first, last):
            bin_code = codes[row, features[k]]
            for channel in range(n_stats):
                hist[k, bin_code, channel] += stats[row, channel]
            hist[k, bin_code, n_stats] += 1.0


@borrowing
def _add_rows_two_class(codes, rows, start, stop, stats, features, first, last, hist):
    """_add_rows for two channels (w_0, w_1), held in registers across the drawn features:
    about 1.7x faster than the channel loop, the same sums."""
    for position in range(start, stop):
        if position + PREFETCH_DISTANCE < stop:
            ahead = rows[position + PREFETCH_DISTANCE]
            prefetch(codes[ahead], features[first])
            prefetch(stats[ahead], 0)
        row = rows[position]
        weight_0 = stats[row, 0]
        weight_1 = stats[row, 1]
        for k in range(first, last):
            bin_code = codes[row, features[k]]
            hist[k, bin_code, 0] += weight_0
            hist[k, bin_code, 1] += weight_1
            hist[k, bin_code, TWO_CLASS_COUNT_CHANNEL] += 1.0


@borrowing
def occupied_bins(hist, n_bins, count_channel, bins):
    """bins[:m] = the bins b < n_bins with rows (hist[b, count_channel] > 0), increasing;
    returns m. Used by every histogram layout: CART's (count last) and the gradient trees'."""
    n_occupied = 0
    for b in range(n_bins):
        bins[n_occupied] = b
        n_occupied += hist[b, count_channel] > 0.0
    return n_occupied


@borrowing
def node_bins(codes, rows, start, stop, feature, bins):
    """occupied_bins of one feature, from the node rows' codes: cheaper than reading 256 bins
    when the node has few rows. The codes taken are marked in a bitmap of four 64-bit words
    held in registers (a bin's word chosen without a branch) and listed in increasing order
    (list_set_bits); the missing bin, bit 63 of the last word, is left out."""
    word_0 = word_1 = word_2 = word_3 = np.uint64(0)
    for position in range(start, stop):
        code = np.uint64(codes[rows[position], feature])
        bit = np.uint64(1) << (code & np.uint64(63))
        word = code >> np.uint64(6)
        word_0 |= bit if word == 0 else np.uint64(0)
        word_1 |= bit if word == 1 else np.uint64(0)
        word_2 |= bit if word == 2 else np.uint64(0)
        word_3 |= bit if word == 3 else np.uint64(0)
    word_3 &= ~(np.uint64(1) << np.uint64(MISSING_BIN & 63))
    n_occupied = list_set_bits(word_0, np.int64(0), bins, np.int64(0))
    n_occupied = list_set_bits(word_1, np.int64(64), bins, n_occupied)
    n_occupied = list_set_bits(word_2, np.int64(128), bins, n_occupied)
    return list_set_bits(word_3, np.int64(192), bins, n_occupied)


@borrowing
def list_set_bits(word, first_bin, bins, n_listed):
    """bins[n_listed:] = first_bin + the indices of the set bits of `word` (uint64), in
    increasing order; returns n_listed plus their number."""
    while word != 0:
        bins[n_listed] = first_bin + np.int64(lowest_set_bit(word))
        n_listed += 1
        word &= word - np.uint64(1)
    return n_listed


def _trailing_zeros_python(word):
    """numba's trailing_zeros intrinsic in plain Python (NUMBA_DISABLE_JIT): the index of a
    nonzero word's lowest set bit."""
    word = int(word)
    return (word & -word).bit_length() - 1


lowest_set_bit = unless_jit_disabled(trailing_zeros, _trailing_zeros_python)


@borrowing
def clear_bins(hist, bins, n_occupied):
    """Zero a slot after its node: its occupied bins bins[:n_occupied] and the missing bin,
    the only ones the node's rows touched."""
    for channel in range(hist.shape[1]):
        hist[MISSING_BIN, channel] = 0.0
    for i in range(n_occupied):
        for channel in range(hist.shape[1]):
            hist[bins[i], channel] = 0.0
