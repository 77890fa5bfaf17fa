"""Software prefetch for the gathers of a node's rows.

A deep node's rows are scattered over the sample arrays: reading codes[row] and stats[row]
in partition order misses the cache on nearly every row, and the hardware prefetcher cannot
guess the next row. Asking for the row PREFETCH_DISTANCE positions ahead hides that latency
(measured on 5% of 800k rows: 158 ns -> 57 ns per row for a 28-feature histogram).
"""

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from ensembles.engine.llvm_arrays import (
    check_array,
    check_integer,
    element_pointer,
    unless_jit_disabled,
)

PREFETCH_DISTANCE = 16  # rows ahead: about one memory latency of histogram work


@intrinsic
def _prefetch(typingctx, array, index):
    """Hint that array[index] will be read soon (llvm.prefetch: read, keep in all caches).
    array: any 1-d array (its strides are applied; a prefetch never faults)."""
    check_array("prefetch", array, contiguous=False)
    check_integer("prefetch", index)

    def codegen(context, builder, signature, args):
        pointer = element_pointer(context, builder, signature.args[0], args[0],
                                  signature.args[1], args[1])
        byte_pointer = ir.IntType(8).as_pointer()
        int32 = ir.IntType(32)
        function_type = ir.FunctionType(ir.VoidType(), [byte_pointer, int32, int32, int32])
        function = builder.module.declare_intrinsic("llvm.prefetch", [byte_pointer],
                                                    function_type)
        builder.call(function, [builder.bitcast(pointer, byte_pointer), int32(0), int32(3),
                                int32(1)])
        return context.get_dummy_value()

    return types.void(array, index), codegen


def _prefetch_python(array, index):
    """prefetch in plain Python: a hint only, so nothing."""


prefetch = unless_jit_disabled(_prefetch, _prefetch_python)
