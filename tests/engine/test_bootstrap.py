"""The numba bootstrap against numpy's legacy RandomState, the draws scikit-learn's forests
make: the same counts, row for row."""

import numpy as np
import pytest

from ensembles.engine.bootstrap import bootstrap_counts


@pytest.mark.parametrize("draw_share", [1.0, 0.3])
@pytest.mark.parametrize("n_samples", [1, 2, 3, 7, 64, 65, 1000, 80000])
@pytest.mark.parametrize("seed", [0, 1, 12345, 2**31 - 2])
def test_bootstrap_counts_are_numpys_legacy_randint_counts(seed, n_samples, draw_share):
    n_draws = max(int(draw_share * n_samples), 1)
    draws = np.random.RandomState(seed).randint(0, n_samples, n_draws)
    expected = np.bincount(draws, minlength=n_samples).astype(np.float64)
    assert np.array_equal(bootstrap_counts(seed, n_samples, n_draws), expected)
