"""What the LLVM intrinsics share: the address of an array element, the type checks that keep
an intrinsic from reading or writing outside its array, and the plain-Python stand-in that
runs under NUMBA_DISABLE_JIT (the engine stepped through in a debugger)."""

from numba import config, types
from numba.core import cgutils
from numba.core.errors import TypingError


def element_pointer(context, builder, array_type, array, index_type, index):
    """Pointer to array[index] of a 1-d view (index of numba type index_type; no bounds or
    wraparound test)."""
    view = context.make_array(array_type)(context, builder, array)
    position = context.cast(builder, index, index_type, types.intp)
    return cgutils.get_item_pointer(context, builder, array_type, view, [position],
                                    wraparound=False)


def check_array(name, array, dtype=None, contiguous=True):
    """Typing-time check of an intrinsic's array argument: 1-d, of `dtype` (None: any) and
    C-contiguous when `contiguous`; else a numba TypingError naming the intrinsic."""
    if not (isinstance(array, types.Array) and array.ndim == 1
            and (dtype is None or array.dtype == dtype)
            and (not contiguous or array.layout == "C")):
        wanted = "a 1-d" + (" C-contiguous" if contiguous else "") + " array" + (
            f" of {dtype}" if dtype is not None else "")
        raise TypingError(f"{name}: the array must be {wanted}, got {array}")


def check_integer(name, index):
    """Typing-time check of an intrinsic's index argument: an integer, else a TypingError."""
    if not isinstance(index, types.Integer):
        raise TypingError(f"{name}: the index must be an integer, got {index}")


def unless_jit_disabled(intrinsic_function, python_function):
    """The intrinsic (or kernel), or its plain-Python equivalent under NUMBA_DISABLE_JIT (an
    intrinsic cannot run in Python; numba's random.seed seeds otherwise than Python's)."""
    return python_function if config.DISABLE_JIT else intrinsic_function
