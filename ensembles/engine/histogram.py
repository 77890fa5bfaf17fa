"""Per-node histograms of sample statistics over the bins of one feature.

Layout of a feature histogram, `hist[bin, channel]` (float64, N_BIN_SLOTS x (n_stats + 1)):

    bin:      0      1     ...   n_bins-1   ...   255 (missing)
    ch 0..S-1 sum of the samples' statistics (g, h / class weights / ...) in that bin
    ch S      number of samples in that bin

`rows[start:stop]` is the node's slice of the partition array of sample indices.
"""

from numba import njit


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
