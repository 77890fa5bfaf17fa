"""Per-node histograms of sample statistics over the bins of one feature.

Layout of a feature histogram, `hist[bin, channel]` (float64, N_BIN_SLOTS x (n_stats + 1)):

    bin:      0      1     ...   n_bins-1   ...   255 (missing)
    ch 0..S-1 sum of the samples' statistics (g, h / class weights / ...) in that bin
    ch S      number of samples in that bin

`rows[start:stop]` is the node's slice of the partition array of sample indices.

The gradient trees build all features of a node at once from row-major codes, one row at a
time (its g and h are read once, its codes are one cache line):

    codes[row, :]  = c_0 c_1 ... c_{F-1}        (uint8, C order)
    hist[k, c_k]  += (g_row, h_row, 1)          for each used feature k

Threads take disjoint blocks of features and each sums its features over the rows in row
order, so every bin's sum is the same for any number of threads. Rows a few positions ahead
are prefetched: a deep node's rows are scattered and each gather would otherwise miss.
"""

from numba import njit, prange

from ensembles.engine.prefetch import PREFETCH_DISTANCE, prefetch

PARALLEL_MIN_WORK = 1 << 20  # rows x features: smaller nodes stay on one thread (a parallel
# launch costs tens of microseconds idle, and a whole time slice when a core is busy elsewhere)


@njit(cache=True, nogil=True)
def build_feature_histogram(codes, rows, start, stop, stats, hist):
    """hist[b, c] = sum of stats[i, c] over node rows i with codes[i] == b; last channel counts."""
    n_stats = stats.shape[1]
    hist[:, :] = 0.0
    for position in range(start, stop):
        row = rows[position]
        bin_code = codes[row]
        for channel in range(n_stats):
            hist[bin_code, channel] += stats[row, channel]
        hist[bin_code, n_stats] += 1.0


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
def build_gradient_histograms(codes, rows, start, stop, stats, features, first, last, hist):
    """hist[k] = (g, h, count) histogram of feature features[k] over the node rows, for
    first <= k < last; codes row-major, stats (n_samples, 2) = (g, h)."""
    for k in range(first, last):
        for b in range(hist.shape[1]):
            hist[k, b, 0] = 0.0
            hist[k, b, 1] = 0.0
            hist[k, b, 2] = 0.0
    for position in range(start, stop):
        if position + PREFETCH_DISTANCE < stop:
            ahead = rows[position + PREFETCH_DISTANCE]
            prefetch(codes[ahead], features[first])
            prefetch(stats[ahead], 0)
        row = rows[position]
        grad = stats[row, 0]
        hess = stats[row, 1]
        for k in range(first, last):
            bin_code = codes[row, features[k]]
            hist[k, bin_code, 0] += grad
            hist[k, bin_code, 1] += hess
            hist[k, bin_code, 2] += 1.0


@njit(cache=True, parallel=True)
def _build_gradient_histograms_parallel(codes, rows, start, stop, stats, features, hist,
                                        n_blocks):
    n_used = features.shape[0]
    for block in prange(n_blocks):
        build_gradient_histograms(codes, rows, start, stop, stats, features,
                                  block * n_used // n_blocks, (block + 1) * n_used // n_blocks,
                                  hist)


@njit(cache=True)
def build_node_histogram(codes, rows, start, stop, stats, features, hist, n_threads):
    """hist[k] for every used feature k: one block of features per thread when the node is
    large enough to pay for a parallel launch, else on this thread (same sums either way)."""
    n_used = features.shape[0]
    n_blocks = min(n_threads, n_used)
    if n_blocks > 1 and (stop - start) * n_used >= PARALLEL_MIN_WORK:
        _build_gradient_histograms_parallel(codes, rows, start, stop, stats, features, hist,
                                            n_blocks)
    else:
        build_gradient_histograms(codes, rows, start, stop, stats, features, 0, n_used, hist)


@njit(cache=True, nogil=True)
def subtract_histogram(parent, child):
    """parent -= child, in place: the sibling's histogram without a pass over its rows."""
    for k in range(parent.shape[0]):
        for b in range(parent.shape[1]):
            for channel in range(parent.shape[2]):
                parent[k, b, channel] -= child[k, b, channel]
