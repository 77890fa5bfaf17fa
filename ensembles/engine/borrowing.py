"""The decorators of the engine's inner kernels: functions that take arrays and allocate none,
compiled without numba's reference counting (its runtime, NRT).

A numba function that is not inlined increments the reference count of each array argument
on entry and decrements it on exit, one atomic call each (numba's reference-count pruning
removes them only in simple control flow). A CART tree node calls a dozen such kernels, with
up to 30 arrays each: 290 calls a node (counted with gdb: 160k on a tree of 559 nodes, 105
once the kernels borrow), a third of a forest tree's time (45 against 30 ms a tree of the
bench, the same trees). The caller owns the arrays and keeps them alive across the call, so
the callee may borrow them. numba refuses to compile a borrowing kernel that allocates (an
array, a copy, an array assignment that may overlap) or returns an array it did not receive.
A borrowing kernel calls only borrowing kernels (or inlined ones).
"""

from numba import njit

borrowing = njit(cache=True, nogil=True, _nrt=False)
borrowing_numpy_errors = njit(cache=True, nogil=True, _nrt=False, error_model="numpy")
