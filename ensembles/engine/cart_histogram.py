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

from ensembles.engine.binning import MISSING_BIN
from ensembles.engine.borrowing import borrowing
from ensembles.engine.prefetch import PREFETCH_DISTANCE, prefetch

TWO_CLASS_STATS = np.int64(2)  # (w_0, w_1): the statistics of two classes
TWO_CLASS_COUNT_CHANNEL = np.int64(2)  # (w_0, w_1, count); typed, as splitting.NEWTON
SQUARED_TARGET_CHANNEL = np.int64(2)  # (g, h, w y^2, count) = (-w y, w, w y^2, count)


@borrowing
def build_drawn_histograms(codes, rows, start, stop, stats, features, first, last, hist):
    """hist[k, b, c] += stats[i, c] over the node rows i with codes[i, features[k]] == b, for
    first <= k < last; channel n_stats counts the rows. The slots must be zero."""
    if stats.shape[1] == TWO_CLASS_STATS:
        _add_rows_two_class(codes, rows, start, stop, stats, features, first, last, hist)
    else:
        _add_rows(codes, rows, start, stop, stats, features, first, last, hist)


@borrowing
def _add_rows(codes, rows, start, stop, stats, features, first, last, hist):
    """The row-by-row sum of build_drawn_histograms, the next rows prefetched (a deep node's
    rows are scattered: each gather would otherwise miss the cache). The prefetch is written
    out here and in _add_rows_two_class: as one shared function it made a random forest fit
    15% slower (LLVM lays the inlined loop out differently; measured)."""
    n_stats = stats.shape[1]
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
    """occupied_bins of one feature, from the node rows' codes (an insertion sort of the
    distinct non-missing codes): cheaper than reading 256 bins when the node has few rows."""
    n_occupied = 0
    for position in range(start, stop):
        code = codes[rows[position], feature]
        if code == MISSING_BIN:
            continue
        i = n_occupied
        while i > 0 and bins[i - 1] > code:
            i -= 1
        if i > 0 and bins[i - 1] == code:
            continue
        for j in range(n_occupied, i, -1):
            bins[j] = bins[j - 1]
        bins[i] = code
        n_occupied += 1
    return n_occupied


@borrowing
def clear_bins(hist, bins, n_occupied):
    """Zero a slot after its node: its occupied bins bins[:n_occupied] and the missing bin,
    the only ones the node's rows touched."""
    for channel in range(hist.shape[1]):
        hist[MISSING_BIN, channel] = 0.0
    for i in range(n_occupied):
        for channel in range(hist.shape[1]):
            hist[bins[i], channel] = 0.0
