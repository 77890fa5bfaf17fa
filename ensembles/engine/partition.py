"""The partition array: one array of row indices that each split reorders in place."""

from numba import njit

from ensembles.engine.binning import MISSING_BIN


@njit(cache=True, nogil=True)
def partition_rows(column, partition, scratch, start, stop, threshold_bin, missing_left):
    """Stable in-place partition of rows[start:stop]: rows going left first; returns their count."""
    n_left = 0
    n_right = 0
    for position in range(start, stop):
        row = partition[position]
        code = column[row]
        goes_left = missing_left if code == MISSING_BIN else code <= threshold_bin
        if goes_left:
            partition[start + n_left] = row
            n_left += 1
        else:
            scratch[n_right] = row
            n_right += 1
    for k in range(n_right):
        partition[start + n_left + k] = scratch[k]
    return n_left
