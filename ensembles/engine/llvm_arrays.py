"""The address of an array element inside an LLVM intrinsic's code generation."""

from numba import types
from numba.core import cgutils


def element_pointer(context, builder, array_type, array, index_type, index):
    """Pointer to array[index] of a 1-d view (index of numba type index_type; no bounds or
    wraparound test)."""
    view = context.make_array(array_type)(context, builder, array)
    position = context.cast(builder, index, index_type, types.intp)
    return cgutils.get_item_pointer(context, builder, array_type, view, [position],
                                    wraparound=False)
