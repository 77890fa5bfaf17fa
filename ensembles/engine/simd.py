"""Vector adds for the histogram kernels, which numba does not vectorize itself.

A gradient histogram bin holds (g, h) in two float64 lanes, or (g, h, count, 0) in four
when the split scans need counts; adding a row to it as one 128- or 256-bit load, add and
store instead of scalar ones made the root histogram of 800k rows x 28 features 1.55x faster
(measured, four lanes), with exactly the same sums.
"""

from llvmlite import ir
from numba import types
from numba.core.errors import TypingError
from numba.extending import intrinsic

from ensembles.engine.llvm_arrays import (
    check_array,
    check_integer,
    element_pointer,
    unless_jit_disabled,
)

LANES = 4


def _typed_vector_add(name, array, index, lanes):
    """The signature and code generation of array[index + j] += lanes[j], j = 0..len - 1, as
    one vector operation (array: C-contiguous 1-d float64, index: an integer, no bounds
    check)."""
    check_array(name, array, types.float64)
    check_integer(name, index)
    for lane in lanes:
        if not isinstance(lane, types.Number):
            raise TypingError(f"{name}: a lane must be a number, got {lane}")
    n_lanes = len(lanes)

    def codegen(context, builder, signature, args):
        pointer = element_pointer(context, builder, signature.args[0], args[0],
                                  signature.args[1], args[1])
        vector_type = ir.VectorType(ir.DoubleType(), n_lanes)
        vector_pointer = builder.bitcast(pointer, vector_type.as_pointer())
        addend = ir.Constant(vector_type, ir.Undefined)
        for lane in range(n_lanes):
            value = context.cast(builder, args[2 + lane], signature.args[2 + lane],
                                 types.float64)
            addend = builder.insert_element(addend, value, ir.IntType(32)(lane))
        total = builder.fadd(builder.load(vector_pointer, align=8), addend)
        builder.store(total, vector_pointer, align=8)
        return context.get_dummy_value()

    return types.void(array, index, *lanes), codegen


@intrinsic
def _add_two_lanes(typingctx, array, index, lane_0, lane_1):
    """array[index + j] += lane_j for j = 0, 1, as one vector operation."""
    return _typed_vector_add("add_two_lanes", array, index, (lane_0, lane_1))


@intrinsic
def _add_four_lanes(typingctx, array, index, lane_0, lane_1, lane_2, lane_3):
    """array[index + j] += lane_j for j = 0..3, as one vector operation."""
    return _typed_vector_add("add_four_lanes", array, index, (lane_0, lane_1, lane_2, lane_3))


def _add_lanes_python(array, index, *lanes):
    """add_two_lanes or add_four_lanes in plain Python: scalar adds, the same sums."""
    for lane, value in enumerate(lanes):
        array[index + lane] += value


add_two_lanes = unless_jit_disabled(_add_two_lanes, _add_lanes_python)
add_four_lanes = unless_jit_disabled(_add_four_lanes, _add_lanes_python)
