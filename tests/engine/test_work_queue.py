"""The work queue's order of items: numpy's stable sort by rows, descending."""

import numpy as np
import pytest

from ensembles.engine.work_queue import largest_first


@pytest.mark.parametrize("n_items", [0, 1, 2, 7, 64, 1000])
def test_largest_first_is_a_stable_descending_argsort(n_items):
    rng = np.random.default_rng(n_items)
    item_rows = rng.integers(0, 20, n_items)  # many ties
    expected = np.argsort(-item_rows, kind="stable")
    assert np.array_equal(largest_first(item_rows), expected)
