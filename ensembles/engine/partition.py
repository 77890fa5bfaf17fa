"""The partition array of the gradient grower: one array of row indices that each split
reorders in place, a level's nodes at once."""

import numpy as np
from numba import njit, prange

from ensembles.engine.binning import MISSING_BIN
from ensembles.engine.borrowing import borrowing
from ensembles.engine.categories import CATEGORY_SET, in_set
from ensembles.engine.work_queue import WORKERS, chunk_nodes, largest_first, next_item

PARTITION_CHUNK_ROWS = 1 << 12  # rows per work item: a small node is still shared
SERIAL_ROWS = 1 << 13  # rows of a batch partitioned without a parallel region (partition_batch)


@borrowing
def _split_chunk(column, threshold_bin, missing_left, bits, partition, scratch, lo, hi):
    """Rows partition[lo:hi] into scratch[lo:hi]: the left ones from lo up in order, the right
    ones from hi - 1 down (reversed); returns the number of left rows. A set split
    (threshold_bin == CATEGORY_SET) sends the codes in `bits` left.

    Branch-free: every row is written at both ends and only the count of its side advances,
    so the next row of the other side overwrites it (a branch on the side mispredicts on
    about every other row: 2x slower, measured). Indices are unsigned (numba tests signed ones
    for wraparound, 2x slower again). The column is read in increasing row order, which the
    hardware prefetches by itself."""
    n_left = np.uint64(0)
    n_right = np.uint64(0)
    first = np.uint64(lo)
    last = np.uint64(hi) - np.uint64(1)
    for position in range(first, np.uint64(hi)):
        row = partition[position]
        left = goes_left(column[np.uint64(row)], threshold_bin, missing_left, bits)
        scratch[first + n_left] = row
        scratch[last - n_right] = row
        n_left += left
        n_right += np.uint64(1) - left
    return n_left


@borrowing
def _count_left(column, threshold_bin, missing_left, bits, partition, lo, hi):
    """The number of rows of partition[lo:hi] going left (_split_chunk, without moving
    them)."""
    n_left = np.uint64(0)
    for position in range(np.uint64(lo), np.uint64(hi)):
        n_left += goes_left(column[np.uint64(partition[position])], threshold_bin, missing_left,
                             bits)
    return n_left


@borrowing
def goes_left(code, threshold_bin, missing_left, bits):
    """1 when a row of this code goes left by the split, else 0 (unsigned)."""
    if threshold_bin == CATEGORY_SET:
        return np.uint64(in_set(bits, code))
    return np.uint64(missing_left if code == MISSING_BIN else code <= threshold_bin)


@njit(cache=True)
def partition_batch(columns, nodes, routed, tree, category_bits, partition, scratch):
    """Stable partition of the rows of every node of a batch by its split (the tree's
    node_arrays.NodeArrays), as _parallel_partition_batch; a batch of fewer than SERIAL_ROWS
    rows is partitioned on the calling thread, node after node, without a parallel region:
    the same partition (a stable partition is unique). A parallel region is a launch and a
    wait for every thread (histogram.build_node_histograms), more than splitting a few
    thousand rows costs. Returns the number of rows going left, per node of the batch."""
    node_start, node_stop = tree.node_start, tree.node_stop
    n_rows = 0
    for node in nodes:
        n_rows += node_stop[node] - node_start[node]
    if n_rows >= SERIAL_ROWS:
        return _parallel_partition_batch(columns, nodes, routed, tree, category_bits, partition,
                                         scratch)
    node_left = np.empty(nodes.shape[0], dtype=np.int64)
    for t in range(nodes.shape[0]):
        node = nodes[t]
        lo, hi = np.int64(node_start[node]), np.int64(node_stop[node])  # as the items' bounds
        column = columns[:, tree.feature[node]]
        bits = category_bits[min(node, category_bits.shape[0] - 1)]
        if routed[t]:
            node_left[t] = _split_chunk(column, tree.threshold_bin[node], tree.missing_left[node],
                                        bits, partition, scratch, lo, hi)
            _place_chunk(scratch, lo, hi, node_left[t], lo, lo + node_left[t], partition)
        else:
            node_left[t] = _count_left(column, tree.threshold_bin[node], tree.missing_left[node],
                                       bits, partition, lo, hi)
    return node_left


@borrowing
def _place_chunk(scratch, lo, hi, n_left, left_at, right_at, partition):
    """A chunk split by _split_chunk into scratch[lo:hi] moved to its place: its n_left left
    rows to partition[left_at:], in order, its right rows (reversed in scratch) to
    partition[right_at:], in order. Loops, no array assignment (engine docstring)."""
    for i in range(n_left):
        partition[left_at + i] = scratch[lo + i]
    for i in range(hi - lo - n_left):
        partition[right_at + i] = scratch[hi - 1 - i]


@njit(cache=True, parallel=True)
def _parallel_partition_batch(columns, nodes, routed, tree, category_bits, partition, scratch):
    """Stable partition of the rows of every node of a batch by its split (the tree's
    node_arrays.NodeArrays: feature, threshold_bin, missing_left, rows node_start:node_stop;
    category_bits[node] for a set split, one row of it when there are none): the rows going
    left first, in their order; only counted, not moved, for the nodes t with routed[t] False
    (splits whose children are final leaves). Returns the number of rows going left, per node
    of the batch.

    Every node's rows are cut into chunks of PARTITION_CHUNK_ROWS; the chunks of all nodes
    are split into scratch by the threads, largest first (work_queue), then each chunk's
    left and right rows are moved to their place. A stable partition is unique, so the
    result does not depend on the number of threads. columns: the codes column-major (a
    node's rows are increasing, so a column is read in address order).
    """
    feature, threshold_bin, missing_left, node_start, node_stop = (
        tree.feature, tree.threshold_bin, tree.missing_left, tree.node_start, tree.node_stop)
    n_nodes = nodes.shape[0]
    first_item, item_node, item_index, item_rows = chunk_nodes(
        (node_stop[nodes] - node_start[nodes]).astype(np.int64),
        np.full(n_nodes, PARTITION_CHUNK_ROWS, dtype=np.int64))
    n_items = first_item[n_nodes]
    item_lo = node_start[nodes[item_node]] + item_index * PARTITION_CHUNK_ROWS
    item_hi = item_lo + item_rows
    order = largest_first(item_rows)
    item_left = np.empty(n_items, dtype=np.int64)
    counter = np.zeros(1, dtype=np.int64)
    for _ in prange(WORKERS):
        item = next_item(counter)
        while item < n_items:
            i = order[item]
            node = nodes[item_node[i]]
            bits = category_bits[min(node, category_bits.shape[0] - 1)]
            if routed[item_node[i]]:
                item_left[i] = _split_chunk(columns[:, feature[node]], threshold_bin[node],
                                            missing_left[node], bits, partition, scratch,
                                            item_lo[i], item_hi[i])
            else:
                item_left[i] = _count_left(columns[:, feature[node]], threshold_bin[node],
                                           missing_left[node], bits, partition, item_lo[i],
                                           item_hi[i])
            item = next_item(counter)
    left_at = np.empty(n_items, dtype=np.int64)
    right_at = np.empty(n_items, dtype=np.int64)
    node_left = np.empty(n_nodes, dtype=np.int64)
    for t in range(n_nodes):
        node_left[t] = item_left[first_item[t]:first_item[t + 1]].sum()
        left_at_node = node_start[nodes[t]]
        right_at_node = left_at_node + node_left[t]
        for i in range(first_item[t], first_item[t + 1]):
            left_at[i] = left_at_node
            right_at[i] = right_at_node
            left_at_node += item_left[i]
            right_at_node += item_hi[i] - item_lo[i] - item_left[i]
    counter[0] = 0
    for _ in prange(WORKERS):
        item = next_item(counter)
        while item < n_items:
            i = order[item]
            if routed[item_node[i]]:
                _place_chunk(scratch, item_lo[i], item_hi[i], item_left[i], left_at[i],
                             right_at[i], partition)
            item = next_item(counter)
    return node_left

