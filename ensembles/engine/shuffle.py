"""Draws without replacement for the growers (the features of a node, a random set of categories):
the first items of a uniformly random order."""

import numpy as np

from ensembles.engine.borrowing import borrowing


@borrowing
def shuffle_steps(items, first, last):
    """Fisher-Yates steps first..last-1: items[first:last] become the next items of a
    uniformly random order of items[:] (further steps continue the same order)."""
    n_items = items.shape[0]
    for i in range(first, last):
        j = i + np.random.randint(n_items - i)
        item = items[j]
        items[j] = items[i]
        items[i] = item
