"""The partition array of the gradient grower (one array of row indices that each split
reorders in place) and the bookkeeping of a split in the flat node arrays."""

import numpy as np
from numba import njit, prange

from ensembles.engine.binning import MISSING_BIN
from ensembles.engine.histogram import CHUNK_ROWS
from ensembles.engine.prefetch import PREFETCH_DISTANCE, prefetch


@njit(cache=True, nogil=True)
def partition_rows(column, partition, scratch, start, stop, threshold_bin, missing_left):
    """Stable in-place partition of rows[start:stop]: rows going left first; returns their count.
    Only scratch[start:stop] is written, so disjoint nodes can be partitioned at once."""
    n_left = 0
    n_right = 0
    for position in range(start, stop):
        if position + PREFETCH_DISTANCE < stop:
            prefetch(column, partition[position + PREFETCH_DISTANCE])
        row = partition[position]
        code = column[row]
        goes_left = missing_left if code == MISSING_BIN else code <= threshold_bin
        if goes_left:
            partition[start + n_left] = row
            n_left += 1
        else:
            scratch[start + n_right] = row
            n_right += 1
    for k in range(n_right):
        partition[start + n_left + k] = scratch[start + k]
    return n_left


@njit(cache=True, nogil=True)
def _split_chunk(column, threshold_bin, missing_left, partition, scratch, lo, hi):
    """Rows partition[lo:hi] into scratch[lo:hi]: the left ones from lo up in order, the right
    ones from hi - 1 down (reversed); returns the number of left rows."""
    n_left = 0
    n_right = 0
    for position in range(lo, hi):
        row = partition[position]
        code = column[row]
        if missing_left if code == MISSING_BIN else code <= threshold_bin:
            scratch[lo + n_left] = row
            n_left += 1
        else:
            n_right += 1
            scratch[hi - n_right] = row
    return n_left


@njit(cache=True, parallel=True)
def partition_node(column, threshold_bin, missing_left, partition, scratch, start, stop):
    """partition_rows, chunk-parallel for large nodes: chunks of CHUNK_ROWS are split into
    scratch independently, then every chunk's left rows and right rows are moved to their
    place. A stable partition is unique, so the result is the same for any number of threads.

    column: the split feature's codes, contiguous (a node's rows are increasing, so they are
    read in address order). Returns the number of left rows.
    """
    n_chunks = (stop - start + CHUNK_ROWS - 1) // CHUNK_ROWS
    if n_chunks <= 1:
        return partition_rows(column, partition, scratch, start, stop, threshold_bin,
                              missing_left)
    chunk_left = np.empty(n_chunks, dtype=np.int64)
    for chunk in prange(n_chunks):
        lo = start + chunk * CHUNK_ROWS
        chunk_left[chunk] = _split_chunk(column, threshold_bin, missing_left, partition,
                                         scratch, lo, min(stop, lo + CHUNK_ROWS))
    n_left = chunk_left.sum()
    left_at = np.empty(n_chunks, dtype=np.int64)
    right_at = np.empty(n_chunks, dtype=np.int64)
    left_at[0] = start
    right_at[0] = start + n_left
    for chunk in range(1, n_chunks):
        left_at[chunk] = left_at[chunk - 1] + chunk_left[chunk - 1]
        right_at[chunk] = right_at[chunk - 1] + CHUNK_ROWS - chunk_left[chunk - 1]
    for chunk in prange(n_chunks):
        lo = start + chunk * CHUNK_ROWS
        hi = min(stop, lo + CHUNK_ROWS)
        for j in range(chunk_left[chunk]):
            partition[left_at[chunk] + j] = scratch[lo + j]
        for j in range(hi - lo - chunk_left[chunk]):
            partition[right_at[chunk] + j] = scratch[hi - 1 - j]
    return n_left


@njit(cache=True, nogil=True)
def record_split(node, n_nodes, n_left, feature, threshold_bin, missing_left, left_child,
                 right_child, gain, node_start, node_stop, node_depth, best_gain, best_feature,
                 best_bin, best_missing_left):
    """Record the node's best split (its rows already partitioned, n_left going left) and
    create its children as nodes n_nodes (left) and n_nodes + 1 (right) with their rows and
    depth."""
    start = node_start[node]
    left_id = n_nodes
    right_id = n_nodes + 1
    feature[node] = best_feature[node]
    threshold_bin[node] = best_bin[node]
    missing_left[node] = best_missing_left[node]
    left_child[node] = left_id
    right_child[node] = right_id
    gain[node] = best_gain[node]
    node_start[left_id] = start
    node_stop[left_id] = start + n_left
    node_start[right_id] = start + n_left
    node_stop[right_id] = node_stop[node]
    node_depth[left_id] = node_depth[right_id] = node_depth[node] + 1
