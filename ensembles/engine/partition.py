"""The partition array (one array of row indices that each split reorders in place) and the
bookkeeping of a split in the growers' flat node arrays."""

from numba import njit

from ensembles.engine.binning import MISSING_BIN
from ensembles.engine.histogram import sum_node_stats
from ensembles.engine.prefetch import PREFETCH_DISTANCE, prefetch


@njit(cache=True, nogil=True)
def partition_rows(column, partition, scratch, start, stop, threshold_bin, missing_left):
    """Stable in-place partition of rows[start:stop]: rows going left first; returns their count."""
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
            scratch[n_right] = row
            n_right += 1
    for k in range(n_right):
        partition[start + n_left + k] = scratch[k]
    return n_left


@njit(cache=True, nogil=True)
def split_node(node, n_nodes, codes, partition, scratch, stats, feature, threshold_bin,
               missing_left, left_child, right_child, gain, node_start, node_stop, node_depth,
               node_sums, best_gain, best_feature, best_bin, best_missing_left):
    """Apply the node's best split: partition its rows, record the split, and create its
    children as nodes n_nodes (left) and n_nodes + 1 (right) with their rows, depth and sums.
    Returns the number of rows that went left."""
    start = node_start[node]
    stop = node_stop[node]
    n_left = partition_rows(codes[:, best_feature[node]], partition, scratch, start, stop,
                            best_bin[node], best_missing_left[node])
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
    node_stop[right_id] = stop
    node_depth[left_id] = node_depth[right_id] = node_depth[node] + 1
    sum_node_stats(partition, start, start + n_left, stats, node_sums[left_id])
    node_sums[right_id] = node_sums[node] - node_sums[left_id]
    return n_left
