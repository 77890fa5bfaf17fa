"""Dynamic scheduling of uneven work items over numba's threads.

prange hands each thread a fixed share of the iterations, which leaves a thread idle when
items differ in size (the chunks and small nodes of one tree level). Here every thread takes
the next item from a shared counter until none is left (items ordered largest first: the
greedy longest-processing-time schedule):

    counter = np.zeros(1, dtype=np.int64)
    for _ in prange(WORKERS):
        item = next_item(counter)
        while item < n_items:
            ...work on item...
            item = next_item(counter)

prange gives each thread a share of the WORKERS loops; a thread's first one drains the queue
with the others, its later ones find it empty. (numba.get_num_threads() inside the kernel
would keep it out of the on-disk cache.) An item's result depends on the item only, never
on the thread that ran it.
"""

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from ensembles.engine.llvm_arrays import check_array, element_pointer, unless_jit_disabled
from ensembles.engine.merge_sort import sort_by_key

WORKERS = 64  # the most threads that share a queue


@intrinsic
def _next_item(typingctx, counter):
    """Atomically counter[0] += 1; returns the value before (the caller's item). counter:
    C-contiguous 1-d int64."""
    check_array("next_item", counter, types.int64)

    def codegen(context, builder, signature, args):
        pointer = element_pointer(context, builder, signature.args[0], args[0], types.intp,
                                  context.get_constant(types.intp, 0))
        return builder.atomic_rmw("add", pointer, ir.Constant(ir.IntType(64), 1), "monotonic")

    return types.int64(counter), codegen


def _next_item_python(counter):
    """next_item in plain Python (prange runs as range under NUMBA_DISABLE_JIT: no race)."""
    item = counter[0]
    counter[0] += 1
    return item


next_item = unless_jit_disabled(_next_item, _next_item_python)


@njit(cache=True, nogil=True)
def chunk_nodes(n_rows, chunk_rows):
    """Cut node t's n_rows[t] rows into chunks of chunk_rows[t] rows, the last one shorter:
    returns first_chunk (node t's chunks are first_chunk[t] .. first_chunk[t + 1] - 1) and each
    chunk's node, index in its node (0, 1, ...) and rows."""
    n_nodes = n_rows.shape[0]
    first_chunk = np.zeros(n_nodes + 1, dtype=np.int64)
    for t in range(n_nodes):
        first_chunk[t + 1] = first_chunk[t] + (n_rows[t] + chunk_rows[t] - 1) // chunk_rows[t]
    n_chunks = first_chunk[n_nodes]
    chunk_node = np.empty(n_chunks, dtype=np.int64)
    chunk_index = np.empty(n_chunks, dtype=np.int64)
    chunk_size = np.empty(n_chunks, dtype=np.int64)
    for t in range(n_nodes):
        for chunk in range(first_chunk[t], first_chunk[t + 1]):
            chunk_node[chunk] = t
            chunk_index[chunk] = chunk - first_chunk[t]
            chunk_size[chunk] = min(chunk_rows[t], n_rows[t] - chunk_index[chunk] * chunk_rows[t])
    return first_chunk, chunk_node, chunk_index, chunk_size


@njit(cache=True, nogil=True)
def largest_first(item_rows):
    """The order in which the threads take the items: most rows first, ties in item order
    (merge_sort.sort_by_key of the item indices by minus their rows)."""
    n_items = item_rows.shape[0]
    order = np.arange(n_items).astype(np.int32)  # the types of the category orders' sort
    sort_by_key(-item_rows.astype(np.float64), order, n_items, np.empty(n_items),
                np.empty(n_items, dtype=np.int32))
    return order
