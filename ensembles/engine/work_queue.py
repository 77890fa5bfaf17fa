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

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from ensembles.engine.llvm_arrays import element_pointer

WORKERS = 64  # the most threads that share a queue


@intrinsic
def next_item(typingctx, counter):
    """Atomically counter[0] += 1; returns the value before (the caller's item)."""

    def codegen(context, builder, signature, args):
        pointer = element_pointer(context, builder, signature.args[0], args[0], types.intp,
                                  context.get_constant(types.intp, 0))
        return builder.atomic_rmw("add", pointer, ir.Constant(ir.IntType(64), 1), "monotonic")

    return types.int64(counter), codegen
