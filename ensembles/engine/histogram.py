"""Per-node histograms of sample statistics over the bins of one feature.

Layout of a feature histogram, `hist[bin, channel]` (float64, N_BIN_SLOTS x channels):

    bin:      0      1     ...   n_bins-1   ...   255 (missing)
    ch 0..S-1 sum of the samples' statistics (g, h / class weights / ...) in that bin
    ch S      number of samples in that bin (the counted layouts)

`rows[start:stop]` is the node's slice of the partition array of sample indices.

The gradient trees build all features of a node at once from row-major codes, one row at a
time (its g and h are read once, its codes are adjacent bytes):

    codes[row, :]  = c_0 c_1 ... c_{F-1}        (uint8, C order)
    hist[k, c_k]  += (g_row, h_row)             for each used feature k

as XGBoost and LightGBM do, without counts: a bin of 16 bytes, one two-lane vector add. The
split scans then tell an empty side by its hessian (splitting.best_newton_threshold) and the
grower takes the children's sizes from the partition. A fit whose scans need counts (a
minimum of rows per leaf above one, sets of categories) uses the counted layout
(g, h, count, 0), whose fourth, zero channel makes each addition one four-lane vector add.
Two lanes are 1.3x faster than four per row over 1M x 28 codes (19.6 against 26.2 ns on an
Intel Xeon, one thread; a tenth of the rows, scattered, 23.0 against 28.9; measured), the
bins of a feature half the cache lines.
Each feature's N_BIN_SLOTS bins are followed by PADDING_BINS unused ones (HISTOGRAM_BINS in
all), so that one code's bins in different features do not lie a multiple of 4096 bytes
apart: the processor matches a load against earlier stores by the low 12 address bits, and
takes such a pair for a dependency (4K aliasing). Unpadded, a row whose features share a
code (zeros, missing values, binary features) made each addition wait on the previous one:
all codes equal took 280 ns per row instead of 17, half of them zero 112 instead of 21
(measured, 28 features).

A feature's used bins are 0..n_bins-1 (its bin count, binning.BinMapper.n_bins_) and
MISSING_BIN: its codes take no other. Builds zero and fill, chunk merges add and
subtractions subtract those only, and no reader (the split scans, a split's left sums) reads
another: the rest of a slot is never written and may hold anything (the allocation's garbage,
or another feature's bins of an earlier tree on other columns). A table's few-level columns
(flags, codes of a few categories) then cost their own bins in each node's zeroing and
subtraction, not 256 (`tests/engine/test_gradient_grower.py` grows the same trees in a pool
of NaN as in one of zeros).

A large node's rows are cut into fixed chunks that threads sum independently; the chunk sums
are then added in chunk order, so every bin's sum is the same for any number of threads.
Rows a few positions ahead are prefetched, every cache line of the codes read: a deep node's
rows are scattered and each gather would otherwise miss (500 features: a row's codes are 8
lines, and prefetching only the first left a scattered node 1.6x slower per row).
"""

import numpy as np
from numba import njit, prange

from ensembles.engine.binning import MISSING_BIN, N_BIN_SLOTS
from ensembles.engine.borrowing import borrowing
from ensembles.engine.prefetch import PREFETCH_DISTANCE, prefetch
from ensembles.engine.simd import LANES, add_four_lanes, add_two_lanes
from ensembles.engine.work_queue import WORKERS, chunk_nodes, largest_first, next_item

CHUNK_ROWS = 1 << 15  # about the rows of a large node's chunk (node_chunk_rows): one chunk (1 ms)
# pays for its own zeroing and summing, and for a parallel launch
MAX_CHUNKS = 8  # most chunks per node histogram: bounds the chunk slots' memory
SERIAL_WORK = 1 << 17  # rows x features of a batch built without a parallel region (about
# 0.1-0.3 ms on one thread): build_node_histograms
FEATURE_BLOCKS = 2  # feature ranges of a small node when a batch has few work items
BLOCK_FEATURES = 32  # features per work item of a wide node: see build_node_histograms
GRADIENT_CHANNELS = np.int64(2)  # g, h (typed, as splitting.NEWTON)
COUNTED_CHANNELS = LANES  # g, h, count, 0
GRADIENT_CHANNEL = 0  # also of every NEWTON statistics row: (g, h, ...)
HESSIAN_CHANNEL = 1
COUNT_CHANNEL = np.int64(2)  # after the statistics: channel n_stats, as in every layout
CACHE_LINE = 64  # bytes: the codes of 64 features
PADDING_BINS = 2  # 64 bytes: a feature's histogram still starts on a cache line
HISTOGRAM_BINS = N_BIN_SLOTS + PADDING_BINS


@njit(cache=True, nogil=True)
def empty_histograms(n_slots, n_used, n_channels):
    """Uninitialised gradient histograms of n_used features in each of n_slots slots, of
    GRADIENT_CHANNELS or COUNTED_CHANNELS (every build zeroes what it fills)."""
    return np.empty((n_slots, n_used, HISTOGRAM_BINS, n_channels))


@njit(cache=True, nogil=True)
def empty_chunk_histograms(n_rows, n_used, n_channels):
    """Room for the extra chunks of any batch over n_rows rows (build_node_histograms): a node
    of r rows has at most r // CHUNK_ROWS chunks besides its first, so a batch, whose nodes
    share the rows, has at most n_rows // CHUNK_ROWS."""
    return empty_histograms(n_rows // CHUNK_ROWS, n_used, n_channels)


@borrowing
def sum_node_stats(rows, start, stop, stats, out):
    """out[c] = sum of stats[i, c] over the node rows; an entry after them (when out has
    one) counts them."""
    n_stats = stats.shape[1]
    out[:] = 0.0
    for position in range(start, stop):
        if position + PREFETCH_DISTANCE < stop:
            prefetch(stats[rows[position + PREFETCH_DISTANCE]], 0)
        row = rows[position]
        for channel in range(n_stats):
            out[channel] += stats[row, channel]
    if out.shape[0] > n_stats:
        out[n_stats] = stop - start


@borrowing
def build_gradient_histograms(codes, rows, start, stop, stats, features, n_bins, first_used,
                              last_used, hist):
    """hist[k] = (g, h) histogram (or (g, h, count, 0) when hist has COUNTED_CHANNELS) of
    column features[k] over rows[start:stop], for first_used <= k < last_used (the other
    hist[k] are left alone), in its used bins only (module docstring; n_bins per column);
    codes row-major, stats (n_samples, 2) = (g, h), hist C-contiguous (n_used,
    HISTOGRAM_BINS, channels), 32-byte aligned as numba allocates it (a bin across two cache
    lines costs 45%). Each row adds to a bin with one vector add;
    indices are unsigned (numba tests signed ones for wraparound). When every column is used
    (features = 0..F-1) the codes are read without the features lookup, about 1.5x faster."""
    if hist.shape[2] == COUNTED_CHANNELS:
        _add_rows(codes, rows, start, stop, stats, features, n_bins, first_used, last_used,
                  hist.reshape(-1), COUNTED_CHANNELS)
    else:
        _add_rows(codes, rows, start, stop, stats, features, n_bins, first_used, last_used,
                  hist.reshape(-1), GRADIENT_CHANNELS)


@njit(inline="always", nogil=True, _nrt=False)
def _add_rows(codes, rows, start, stop, stats, features, n_bins, first_used, last_used, bins,
              n_channels):
    """build_gradient_histograms on the flat bins of hist, for a literal n_channels (inlined:
    the strides are constants, 10% faster than read from the array)."""
    every_column = features.shape[0] == codes.shape[1]
    bin_stride = np.uint64(n_channels)
    feature_stride = np.uint64(HISTOGRAM_BINS * n_channels)
    for k in range(first_used, last_used):
        feature_bins = bins[np.uint64(k) * feature_stride:np.uint64(k + 1) * feature_stride]
        feature_bins[:n_bins[k if every_column else features[k]] * n_channels] = 0.0
        feature_bins[MISSING_BIN * n_channels:(MISSING_BIN + 1) * n_channels] = 0.0
    first = np.uint64(start)
    end = np.uint64(stop)
    first_column, end_column = first_used, last_used  # the span of a row's codes read
    if not every_column and last_used > first_used:
        first_column, end_column = features[first_used], features[last_used - 1] + 1
    for position in range(first, end):
        if position + np.uint64(PREFETCH_DISTANCE) < end:
            ahead = np.uint64(rows[position + np.uint64(PREFETCH_DISTANCE)])
            for column in range(first_column, end_column, CACHE_LINE):
                prefetch(codes[ahead], column)
            prefetch(codes[ahead], max(end_column - 1, 0))  # the span's last line
            prefetch(stats[ahead], 0)
        row = np.uint64(rows[position])
        grad = stats[row, np.uint64(GRADIENT_CHANNEL)]
        hess = stats[row, np.uint64(HESSIAN_CHANNEL)]
        for k in range(np.uint64(first_used), np.uint64(last_used)):
            bin_code = codes[row, k] if every_column else codes[row, features[k]]
            at = k * feature_stride + np.uint64(bin_code) * bin_stride
            if n_channels == COUNTED_CHANNELS:
                add_four_lanes(bins, at, grad, hess, 1.0, 0.0)
            else:
                add_two_lanes(bins, at, grad, hess)


@njit(cache=True)
def build_node_histograms(codes, rows, stats, features, n_bins, nodes, node_start, node_stop,
                          node_slot, pool, chunk_pool, sibling_slot):
    """pool[node_slot[node]] = the histogram of every node in `nodes` over its rows
    rows[node_start[node]:node_stop[node]], and pool[sibling_slot[t]] -= that histogram of
    nodes[t] where sibling_slot[t] >= 0 (_parallel_node_histograms), in each feature's used
    bins (n_bins per column, module docstring). A batch of fewer than
    SERIAL_WORK rows x features, each node below CHUNK_ROWS rows (one chunk), is built on the
    calling thread without a parallel region, node after node: the same sums (a node of one
    chunk is summed in its slot in row order either way). A parallel region is a launch and a
    wait for every thread (2 us on one thread, 50-90 us on two threads of a busy machine, per
    region; measured), more than the histogram of a few thousand rows costs."""
    n_used = features.shape[0]
    if not builds_serially(nodes, node_start, node_stop, n_used):
        _parallel_node_histograms(codes, rows, stats, features, n_bins, nodes, node_start,
                                  node_stop, node_slot, pool, chunk_pool, sibling_slot)
        return
    serial_node_histograms(codes, rows, stats, features, n_bins, nodes, node_start, node_stop,
                           node_slot, pool, sibling_slot, (np.int64(0), np.int64(n_used)))


@borrowing
def builds_serially(nodes, node_start, node_stop, n_used):
    """Whether build_node_histograms builds the histograms of `nodes` over n_used features on
    the calling thread: fewer than SERIAL_WORK rows x features, each node below CHUNK_ROWS
    rows."""
    batch_rows = 0
    largest = 0
    for t in range(nodes.shape[0]):
        node_rows = node_stop[nodes[t]] - node_start[nodes[t]]
        batch_rows += node_rows
        largest = max(largest, node_rows)
    return batch_rows * n_used < SERIAL_WORK and largest < CHUNK_ROWS


@borrowing
def serial_node_histograms(codes, rows, stats, features, n_bins, nodes, node_start, node_stop,
                           node_slot, pool, sibling_slot, feature_range):
    """build_node_histograms node after node on the calling thread, of the used features
    feature_range = (first, stop) only (the others' bins are left alone): a thread's share of
    a level split by features (gradient_grower). Borrowing: its views of the slots cost no
    reference counts, four calls a feature where the caller made them."""
    first, stop = feature_range
    for t in range(nodes.shape[0]):
        hist = pool[node_slot[nodes[t]]]
        build_gradient_histograms(codes, rows, np.int64(node_start[nodes[t]]),
                                  np.int64(node_stop[nodes[t]]), stats, features, n_bins,
                                  first, stop, hist)
        if sibling_slot[t] >= 0:
            for k in range(first, stop):
                add_histogram(pool[sibling_slot[t], k], hist[k], n_bins[features[k]], -1.0)


@njit(cache=True, parallel=True)
def _parallel_node_histograms(codes, rows, stats, features, n_bins, nodes, node_start,
                              node_stop, node_slot, pool, chunk_pool, sibling_slot):
    """pool[node_slot[node]] = the histogram of every node in `nodes` over its rows
    rows[node_start[node]:node_stop[node]], all nodes in one dynamically scheduled pass; and
    pool[sibling_slot[t]] -= that histogram of nodes[t] where sibling_slot[t] >= 0: the
    sibling's histogram by subtraction, hist(larger) = hist(parent) - hist(smaller), when the
    slot holds the parent's.

    A node of r >= CHUNK_ROWS rows is cut into an even number of equal chunks, at most
    MAX_CHUNKS and at most r // CHUNK_ROWS + 1 (node_chunk_rows); chunk 0 is summed in the node's
    slot, each other chunk in its own buffer of chunk_pool (empty_chunk_histograms), and
    the chunks are added to the slot in chunk order, so every bin's sum depends on the node
    only, not on the number of threads; a feature's subtraction from the sibling slot follows
    in the same parallel item (a parallel loop of its own was a launch and a wait more per
    batch). The chunks (a small node is one chunk) are the work items
    (work_queue.chunk_nodes), taken by the threads largest first. A batch of fewer than
    FEATURE_BLOCKS chunks (a loss-guided split of a small node) cuts each chunk's features
    into FEATURE_BLOCKS ranges instead, each a work item: the sums are the same, and the
    threads share the node. With more than BLOCK_FEATURES features, each chunk is cut into
    blocks of BLOCK_FEATURES features: a row's codes of a block are half a cache line, and
    the block's (g, h) histograms (132 KB) stay in L2, where a 500-feature node's (2 MB) did
    not (wide fit, 100k x 500, on an Intel Xeon of 2 MB L2: 7.3-7.5 s, against 7.6 for
    blocks of 16 features, 7.8-8.0 for 64, 8.2-8.3 for 128; with the counted bins, blocks of
    64 had been 10.4 against 15.0 s for whole nodes; measured).
    """
    n_nodes = nodes.shape[0]
    n_used = features.shape[0]
    n_rows = (node_stop[nodes] - node_start[nodes]).astype(np.int64)
    chunk_rows = node_chunk_rows(n_rows)
    first_chunk, chunk_node, chunk_index, chunk_size = chunk_nodes(n_rows, chunk_rows)
    n_chunks = first_chunk[n_nodes]
    chunk_hists = chunk_pool[:n_chunks - n_nodes]  # chunk 0 is summed in the slot
    block_features = n_used
    if n_used > BLOCK_FEATURES:
        block_features = BLOCK_FEATURES
    elif n_chunks < FEATURE_BLOCKS:
        block_features = max(1, -(-n_used // FEATURE_BLOCKS))
    n_blocks = -(-n_used // block_features)
    n_items = n_chunks * n_blocks  # item i: block i % n_blocks of chunk i // n_blocks
    order = largest_first(np.repeat(chunk_size, n_blocks))
    counter = np.zeros(1, dtype=np.int64)
    for _ in prange(WORKERS):
        item = next_item(counter)
        while item < n_items:
            chunk = order[item] // n_blocks
            block = order[item] % n_blocks
            t = chunk_node[chunk]
            lo = node_start[nodes[t]] + chunk_index[chunk] * chunk_rows[t]
            build_gradient_histograms(
                codes, rows, lo, lo + chunk_size[chunk], stats, features, n_bins,
                block * block_features, min((block + 1) * block_features, n_used),
                pool[node_slot[nodes[t]]] if chunk_index[chunk] == 0
                else chunk_hists[chunk - t - 1])
            item = next_item(counter)
    for pair in prange(n_nodes * n_used):  # one feature a parallel item: a loss-guided
        t = pair // n_used  # batch is one node, which one thread merged while the other waited
        k = pair % n_used
        hist = pool[node_slot[nodes[t]], k]
        for chunk in range(first_chunk[t] + 1, first_chunk[t + 1]):
            add_histogram(hist, chunk_hists[chunk - t - 1, k], n_bins[features[k]], 1.0)
        if sibling_slot[t] >= 0:
            add_histogram(pool[sibling_slot[t], k], hist, n_bins[features[k]], -1.0)


@njit(cache=True, nogil=True)
def node_chunk_rows(n_rows):
    """Rows per chunk of nodes of n_rows rows (build_node_histograms): an even number of equal
    chunks, so that two threads finish a node together. Chunks of CHUNK_ROWS with a short last
    one left a thread idle: a 240k-row root was chunks of 32k, 32k, ..., 10k, and the smaller
    child of a level-1 split of 100k rows three of 32k and one of 4k."""
    n_chunks = np.minimum(MAX_CHUNKS, n_rows // CHUNK_ROWS + 1)
    n_chunks -= (n_chunks > 1) & (n_chunks % 2 == 1)
    return np.maximum(1, (n_rows + n_chunks - 1) // n_chunks)


@borrowing
def add_histogram(target, source, n_bins, sign):
    """target += sign * source, in place, over one feature's used bins (0..n_bins-1 and
    MISSING_BIN, both (bin, channel) C-contiguous): a node's chunks merged (sign 1) and the
    sibling's histogram without a pass over its rows (sign -1: x + (-1 y) is x - y to the
    bit). One loop over the flat bins, which numba vectorizes; it did not vectorize a loop
    over the bins around one over the channels."""
    n_channels = target.shape[1]
    flat_target = target.reshape(-1)
    flat_source = source.reshape(-1)
    for i in range(n_bins * n_channels):
        flat_target[i] += sign * flat_source[i]
    for i in range(MISSING_BIN * n_channels, (MISSING_BIN + 1) * n_channels):
        flat_target[i] += sign * flat_source[i]
