"""Software prefetch for the gathers of a node's rows.

A deep node's rows are scattered over the sample arrays: reading codes[row] and stats[row]
in partition order misses the cache on nearly every row, and the hardware prefetcher cannot
guess the next row. Asking for the row PREFETCH_DISTANCE positions ahead hides that latency
(measured on 5% of 800k rows: 158 ns -> 57 ns per row for a 28-feature histogram).
"""

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from ensembles.engine.llvm_arrays import element_pointer

PREFETCH_DISTANCE = 16  # rows ahead: about one memory latency of histogram work


@intrinsic
def prefetch(typingctx, array, index):
    """Hint that array[index] will be read soon (llvm.prefetch: read, keep in all caches)."""

    def codegen(context, builder, signature, args):
        pointer = element_pointer(context, builder, signature.args[0], args[0],
                                  signature.args[1], args[1])
        byte_pointer = ir.IntType(8).as_pointer()
        int32 = ir.IntType(32)
        function_type = ir.FunctionType(ir.VoidType(), [byte_pointer, int32, int32, int32])
        function = cgutils.get_or_insert_function(builder.module, function_type,
                                                  "llvm.prefetch.p0")
        builder.call(function, [builder.bitcast(pointer, byte_pointer), int32(0), int32(3),
                                int32(1)])
        return context.get_dummy_value()

    return types.void(array, index), codegen
