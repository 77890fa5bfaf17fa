"""A forest tree's bootstrap, drawn as scikit-learn's forests draw it: numpy's legacy
`RandomState(seed).randint(0, n, n_draws)` (n_draws = n, or int(max_samples * n)), counted
per row, in one numba pass without the GIL (numpy's draws and bincount held it for 1.7 ms of
each tree of 80k rows, while the other thread's tree waited for it).

numpy's legacy generator is the Mersenne Twister seeded by init_genrand(seed), as numba's
`random.seed` seeds it. A draw below n is its next 32-bit output masked to the smallest
2^k - 1 >= n - 1, drawn again while above n - 1 (numpy's masked rejection for a legacy
integer range below 2^32).
"""

import random

import numpy as np
from numba import njit

from ensembles.engine.llvm_arrays import unless_jit_disabled


@njit(cache=True, nogil=True)
def _drawn_counts(seed, n_samples, n_draws):
    """counts[i] = how often row i is among the draws of RandomState(seed).randint(0,
    n_samples, n_draws), as float64; seed < 2^32."""
    random.seed(seed)
    largest = n_samples - 1
    mask = largest
    for shift in (1, 2, 4, 8, 16):
        mask |= mask >> shift
    counts = np.zeros(n_samples)
    for _ in range(n_draws):
        row = random.getrandbits(32) & mask
        while row > largest:
            row = random.getrandbits(32) & mask
        counts[row] += 1.0
    return counts


def _drawn_counts_python(seed, n_samples, n_draws):
    """_drawn_counts under NUMBA_DISABLE_JIT, by numpy itself: Python's own random.seed seeds
    its Mersenne Twister another way (init_by_array)."""
    draws = np.random.RandomState(seed).randint(0, n_samples, n_draws)
    return np.bincount(draws, minlength=n_samples).astype(np.float64)


bootstrap_counts = unless_jit_disabled(_drawn_counts, _drawn_counts_python)
