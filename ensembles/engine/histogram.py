"""Per-node histograms of sample statistics over the bins of one feature.

Layout of a feature histogram, `hist[bin, channel]` (float64, N_BIN_SLOTS x (n_stats + 1)):

    bin:      0      1     ...   n_bins-1   ...   255 (missing)
    ch 0..S-1 sum of the samples' statistics (g, h / class weights / ...) in that bin
    ch S      number of samples in that bin

`rows[start:stop]` is the node's slice of the partition array of sample indices.
"""

from numba import njit, prange


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
        row = rows[position]
        for channel in range(n_stats):
            out[channel] += stats[row, channel]
    out[n_stats] = stop - start


@njit(cache=True, parallel=True)
def build_node_histogram(codes, rows, start, stop, stats, features, hist):
    """hist[k] = histogram of feature features[k] over the node rows, one feature per thread.

    hist: (n_features_used, N_BIN_SLOTS, n_stats + 1). Each feature is summed serially in row
    order, so the result does not depend on the number of threads.
    """
    for k in prange(features.shape[0]):
        build_feature_histogram(codes[:, features[k]], rows, start, stop, stats, hist[k])


@njit(cache=True, parallel=True)
def subtract_histogram(parent, child):
    """parent -= child, in place: the sibling's histogram without a pass over its rows."""
    for k in prange(parent.shape[0]):
        parent[k] -= child[k]
