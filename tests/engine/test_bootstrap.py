"""The numba bootstrap against numpy's legacy RandomState, the draws scikit-learn's forests
make: the same counts, row for row."""

import numpy as np
import pytest

from ensembles.engine.bootstrap import bootstrap_counts


@pytest.mark.parametrize("n_samples", [1, 2, 3, 7, 64, 65, 1000, 80000])
@pytest.mark.parametrize("seed", [0, 1, 12345, 2**31 - 2])
def test_bootstrap_counts_are_numpys_legacy_randint_counts(seed, n_samples):
    draws = np.random.RandomState(seed).randint(0, n_samples, n_samples)
    expected = np.bincount(draws, minlength=n_samples).astype(np.float64)
    assert np.array_equal(bootstrap_counts(seed, n_samples), expected)
