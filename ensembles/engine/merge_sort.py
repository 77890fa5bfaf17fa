"""A stable sort that allocates nothing, for the borrowing kernels (borrowing.py): a bottom-up
merge sort of (key, item) pairs, runs of width 1, 2, 4, ..., merged back and forth between the
arrays and a scratch pair. numba's stable argsort allocates, and took 2.3 s of a cold start to
compile."""

import numpy as np

from ensembles.engine.borrowing import borrowing


@borrowing
def sort_by_key(keys, items, n, key_scratch, item_scratch):
    """Sort items[:n] by keys[:n], increasing (both arrays permuted), equal keys in their
    order. The scratch arrays hold n pairs."""
    in_scratch = False
    width = np.int64(1)  # typed: a literal 1 is another signature of _merge_runs
    while width < n:
        if in_scratch:
            _merge_runs(key_scratch, item_scratch, keys, items, n, width)
        else:
            _merge_runs(keys, items, key_scratch, item_scratch, n, width)
        in_scratch = not in_scratch
        width *= 2
    if in_scratch:
        for i in range(n):
            keys[i] = key_scratch[i]
            items[i] = item_scratch[i]


@borrowing
def _merge_runs(keys, items, merged_keys, merged_items, n, width):
    """One pass: each two adjacent sorted runs of `width` pairs merged into the targets, the
    left run's pair first among equal keys."""
    for start in range(0, n, 2 * width):
        middle, stop = min(start + width, n), min(start + 2 * width, n)
        left, right = start, middle
        for out in range(start, stop):
            if right == stop or (left < middle and keys[left] <= keys[right]):
                merged_keys[out] = keys[left]
                merged_items[out] = items[left]
                left += 1
            else:
                merged_keys[out] = keys[right]
                merged_items[out] = items[right]
                right += 1
