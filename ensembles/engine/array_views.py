"""Views of arrays at their addresses, so that one kernel reads many arrays of different
lengths (the trees of a PackedEnsemble: each tree's own thresholds and leaf values) from a
table of their addresses, without copying them into one array first.

A view holds no reference: whoever passes the addresses keeps the arrays alive while the
kernel runs (PackedEnsemble keeps its trees).
"""

import ctypes

import numpy as np
from numba import carray, njit, types
from numba.extending import intrinsic

from ensembles.engine.llvm_arrays import check_integer, unless_jit_disabled


@intrinsic
def _pointer_at(typingctx, address):
    """The address (an integer) as a void pointer (LLVM inttoptr)."""
    check_integer("pointer_at", address)

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], context.get_value_type(types.voidptr))

    return types.voidptr(address), codegen


def _pointer_at_python(address):
    """pointer_at in plain Python: a ctypes void pointer, which numba.carray takes."""
    return ctypes.c_void_p(int(address))


pointer_at = unless_jit_disabled(_pointer_at, _pointer_at_python)


@njit(cache=True, inline="always")
def address_of(array):
    """The address of a C-contiguous array's first element (ValueError otherwise: a view at
    the address would not read the array's elements)."""
    if not array.flags.c_contiguous:
        raise ValueError("an address view needs a C-contiguous array")
    return np.int64(array.ctypes.data)


@njit(cache=True, inline="always")
def float_rows_at(address, n_rows, n_columns):
    """The (n_rows, n_columns) C-contiguous float64 array at `address`."""
    return carray(pointer_at(address), (n_rows, n_columns), np.float64)


@njit(cache=True, inline="always")
def floats_at(address, n):
    """The n float64 at `address`."""
    return carray(pointer_at(address), n, np.float64)


@njit(cache=True, inline="always")
def uint32s_at(address, n):
    """The n uint32 at `address`."""
    return carray(pointer_at(address), n, np.uint32)
