"""Per-node histograms of sample statistics over the bins of one feature.

Layout of a feature histogram, `hist[bin, channel]` (float64, N_BIN_SLOTS x (n_stats + 1)):

    bin:      0      1     ...   n_bins-1   ...   255 (missing)
    ch 0..S-1 sum of the samples' statistics (g, h / class weights / ...) in that bin
    ch S      number of samples in that bin

`rows[start:stop]` is the node's slice of the partition array of sample indices.

The gradient trees build all features of a node at once from row-major codes, one row at a
time (its g and h are read once, its codes are one cache line):

    codes[row, :]  = c_0 c_1 ... c_{F-1}        (uint8, C order)
    hist[k, c_k]  += (g_row, h_row, 1, 0)       for each used feature k

Their bins have a fourth, zero channel so that each addition is one four-lane vector add.

A large node's rows are cut into fixed chunks that threads sum independently; the chunk sums
are then added in chunk order, so every bin's sum is the same for any number of threads.
Rows a few positions ahead are prefetched: a deep node's rows are scattered and each gather
would otherwise miss.
"""

import numpy as np
from numba import njit, prange

from ensembles.engine.binning import N_BIN_SLOTS
from ensembles.engine.prefetch import PREFETCH_DISTANCE, prefetch
from ensembles.engine.simd import LANES, add_four_lanes

CHUNK_ROWS = 1 << 15  # least rows per chunk of a large node: one chunk (about 1 ms of work)
# pays for its own zeroing and summing, and for a parallel launch
MAX_CHUNKS = 16  # most chunks per node histogram: bounds the chunk slots' memory
GRADIENT_CHANNELS = LANES  # g, h, count, 0
COUNT_CHANNEL = 2


@njit(cache=True, nogil=True)
def sum_node_stats(rows, start, stop, stats, out):
    """out[c] = sum of stats[i, c] over the node rows; last entry counts them."""
    n_stats = stats.shape[1]
    out[:] = 0.0
    for position in range(start, stop):
        if position + PREFETCH_DISTANCE < stop:
            prefetch(stats[rows[position + PREFETCH_DISTANCE]], 0)
        row = rows[position]
        for channel in range(n_stats):
            out[channel] += stats[row, channel]
    out[n_stats] = stop - start


@njit(cache=True, nogil=True)
def build_gradient_histograms(codes, rows, start, stop, stats, features, hist):
    """hist[k] = (g, h, count, 0) histogram of column features[k] over rows[start:stop];
    codes row-major, stats (n_samples, 2) = (g, h), hist C-contiguous (n_used, N_BIN_SLOTS,
    GRADIENT_CHANNELS), 32-byte aligned as numba allocates it (a bin across two cache lines
    costs 45%).
    Each row adds to a bin with one four-lane add; indices are unsigned (numba tests signed
    ones for wraparound). When every column is used (features = 0..F-1) the codes are read
    without the features lookup, about 1.5x faster."""
    bins = hist.reshape(-1)
    bins[:] = 0.0
    n_used = np.uint64(features.shape[0])
    every_column = features.shape[0] == codes.shape[1]
    bin_stride = np.uint64(GRADIENT_CHANNELS)
    feature_stride = np.uint64(N_BIN_SLOTS * GRADIENT_CHANNELS)  # a constant: 10% faster
    first = np.uint64(start)
    end = np.uint64(stop)
    for position in range(first, end):
        if position + np.uint64(PREFETCH_DISTANCE) < end:
            ahead = np.uint64(rows[position + np.uint64(PREFETCH_DISTANCE)])
            prefetch(codes[ahead], 0)
            prefetch(stats[ahead], 0)
        row = np.uint64(rows[position])
        grad = stats[row, np.uint64(0)]
        hess = stats[row, np.uint64(1)]
        for k in range(n_used):
            bin_code = codes[row, k] if every_column else codes[row, features[k]]
            add_four_lanes(bins, k * feature_stride + np.uint64(bin_code) * bin_stride,
                           grad, hess, 1.0, 0.0)


@njit(cache=True, parallel=True)
def build_node_histogram(codes, rows, start, stop, stats, features, hist, chunk_hists):
    """hist[k] for every used feature k over the node rows rows[start:stop].

    The rows are cut into at most MAX_CHUNKS chunks of at least CHUNK_ROWS; each chunk is
    summed into its own slot of chunk_hists (by any thread) and the chunks are added in chunk
    order, so every bin's sum depends on the node only, not on the number of threads. A node
    of one chunk is summed directly into hist.
    """
    chunk_rows = max(CHUNK_ROWS, (stop - start + MAX_CHUNKS - 1) // MAX_CHUNKS)
    n_chunks = (stop - start + chunk_rows - 1) // chunk_rows
    if n_chunks <= 1:
        build_gradient_histograms(codes, rows, start, stop, stats, features, hist)
        return
    for chunk in prange(n_chunks):
        build_gradient_histograms(codes, rows, start + chunk * chunk_rows,
                                  min(stop, start + (chunk + 1) * chunk_rows), stats, features,
                                  chunk_hists[chunk])
    for k in prange(features.shape[0]):
        for b in range(hist.shape[1]):
            for channel in range(hist.shape[2]):
                total = chunk_hists[0, k, b, channel]
                for chunk in range(1, n_chunks):
                    total += chunk_hists[chunk, k, b, channel]
                hist[k, b, channel] = total


@njit(cache=True, nogil=True)
def subtract_histogram(parent, child):
    """parent -= child, in place: the sibling's histogram without a pass over its rows."""
    for k in range(parent.shape[0]):
        for b in range(parent.shape[1]):
            for channel in range(parent.shape[2]):
                parent[k, b, channel] -= child[k, b, channel]
