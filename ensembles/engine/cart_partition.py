"""Split of a CART node's rows (cart_grower): the node's slice of the partition array is
reordered in place, left rows first, each side in its previous order, and the left child's
statistics are summed on the way (the right child's are the parent's minus the left's):

    partition[start:stop] = r_0 r_1 ... r_{n-1}  ->  [ left rows | right rows ]
    left_sums = (sum of stats[row] over the left rows, in that order; their count)

One pass instead of a partition and then a sum over the left rows: each row's statistics are
read while its codes are (both prefetched), in the order a separate sum would add them.
"""

import numpy as np
from numba import njit

from ensembles.engine.binning import MISSING_BIN
from ensembles.engine.borrowing import borrowing
from ensembles.engine.cart_histogram import SQUARED_ERROR_STATS, TWO_CLASS_STATS
from ensembles.engine.categories import CATEGORY_SET, in_set
from ensembles.engine.prefetch import PREFETCH_DISTANCE, prefetch

LOCAL_SUMS = 3  # channels _partition_rows sums in local variables


@borrowing
def partition_node(codes, feature, threshold_bin, missing_left, bits, partition, scratch,
                   start, stop, stats, left_sums):
    """Stable in-place partition of partition[start:stop] by "code <= threshold_bin" (missing
    codes go left when missing_left), or by "code in bits" for a set split (threshold_bin ==
    CATEGORY_SET), with left_sums as in the module docstring; returns the number of left rows.
    codes: uint8 (n_samples, n_features); scratch: as long as partition.

    Branch-free: every row is written to both sides (a left row in place, a right row to
    scratch) and only the count of its side advances; the right rows' statistics add 0 to
    left_sums, which leaves the sums unchanged."""
    n_stats = stats.shape[1]
    if n_stats == TWO_CLASS_STATS:
        n_left = _partition_rows(codes, feature, threshold_bin, missing_left, bits, partition,
                                 scratch, start, stop, stats, left_sums, TWO_CLASS_STATS)
    elif n_stats == SQUARED_ERROR_STATS:
        n_left = _partition_rows(codes, feature, threshold_bin, missing_left, bits, partition,
                                 scratch, start, stop, stats, left_sums, SQUARED_ERROR_STATS)
    else:
        n_left = _partition_rows(codes, feature, threshold_bin, missing_left, bits, partition,
                                 scratch, start, stop, stats, left_sums, n_stats)
    for i in range(stop - start - n_left):  # a loop: a slice assignment allocates
        partition[start + n_left + i] = scratch[i]
    left_sums[n_stats] = n_left
    return n_left


@njit(inline="always", nogil=True, _nrt=False)
def _partition_rows(codes, feature, threshold_bin, missing_left, bits, partition, scratch,
                    start, stop, stats, left_sums, n_stats):
    """partition_node's pass over the rows: the left rows moved to the front of
    partition[start:stop], the right rows to scratch, left_sums[:n_stats] summed; returns the
    number of left rows. Inlined, so that a constant n_stats unrolls the channels (a loop
    over them set up a vector loop for every row). Indices are unsigned (numba tests signed
    ones for wraparound). Up to three channels are summed in local variables, each row's
    statistics times 1.0 or 0.0 (the same sums: x * 0.0 adds a zero): in left_sums, the
    sums were loaded and stored at every row, and the side's test compiled as a branch that
    mispredicts half the rows."""
    for channel in range(n_stats + 1):
        left_sums[channel] = 0.0
    sum_0 = sum_1 = sum_2 = 0.0
    n_left = np.uint64(0)
    n_right = np.uint64(0)
    first = np.uint64(start)
    for position in range(first, np.uint64(stop)):
        if position + np.uint64(PREFETCH_DISTANCE) < np.uint64(stop):
            ahead = np.uint64(partition[position + np.uint64(PREFETCH_DISTANCE)])
            prefetch(codes[ahead], feature)
            prefetch(stats[ahead], 0)
        row = np.uint64(partition[position])
        code = codes[row, feature]
        if threshold_bin == CATEGORY_SET:
            goes_left = in_set(bits, code)
        else:
            goes_left = missing_left if code == MISSING_BIN else code <= threshold_bin
        partition[first + n_left] = row
        scratch[n_right] = row
        left = np.float64(goes_left)
        if n_stats > LOCAL_SUMS:
            for channel in range(n_stats):
                left_sums[channel] += stats[row, channel] * left
        else:
            sum_0 += stats[row, 0] * left
            if n_stats > 1:
                sum_1 += stats[row, 1] * left
            if n_stats > 2:
                sum_2 += stats[row, 2] * left
        n_left += np.uint64(goes_left)
        n_right += np.uint64(not goes_left)
    if n_stats <= LOCAL_SUMS:
        left_sums[0] = sum_0
        if n_stats > 1:
            left_sums[1] = sum_1
        if n_stats > 2:
            left_sums[2] = sum_2
    return np.int64(n_left)  # counted unsigned; signed for the copy and the caller
