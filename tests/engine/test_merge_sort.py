"""The allocation-free merge sort: numpy's stable argsort, ties kept in their order."""

import numpy as np
import pytest

from ensembles.engine.merge_sort import sort_by_key


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, 8, 255, 256])
@pytest.mark.parametrize("n_distinct", [3, 1000])
def test_sort_by_key_is_numpys_stable_argsort(n, n_distinct):
    """Odd and even numbers of passes (the result ends in the scratch arrays or not), many
    ties or none; the pairs past n are left alone."""
    rng = np.random.default_rng(n * n_distinct)
    keys = rng.integers(0, n_distinct, n + 4) / 7.0
    items = rng.permutation(n + 4).astype(np.int32)
    order = np.argsort(keys[:n], kind="stable")
    expected_keys = np.concatenate([keys[:n][order], keys[n:]])
    expected_items = np.concatenate([items[:n][order], items[n:]])
    sort_by_key(keys, items, n, np.empty(n + 4), np.empty(n + 4, dtype=np.int32))
    assert np.array_equal(keys, expected_keys)
    assert np.array_equal(items, expected_items)
