"""vector_exp against numpy's exp: the units in the last place it may differ by, and the
values at the ends of the float64 range."""

import numpy as np
import pytest
from numba import njit

from ensembles.engine.vector_exp import FUSED, float_from_bits, vector_exp


@njit(error_model="numpy", fastmath=FUSED)  # as the losses' kernels call it
def exp_of_each(x):
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = vector_exp(x[i])
    return out


@pytest.mark.parametrize(("low", "high"), [(-1.0, 1.0), (-40.0, 40.0), (-708.0, 709.78)])
def test_within_two_units_in_the_last_place_of_numpy(low, high):
    x = np.random.default_rng(0).uniform(low, high, 1_000_000)
    expected = np.exp(x)
    units = np.abs(exp_of_each(x) - expected) / np.spacing(expected)
    assert units.max() <= 2.0
    assert np.mean(units) < 0.2  # mostly the same float


def test_ends_of_the_range():
    x = np.array([0.0, -0.0, 1.0, np.log(2.0), 709.78, 709.79, 1e4, np.inf, -708.0, -708.5,
                  -1e4, -np.inf, np.nan])
    with np.errstate(over="ignore"):
        expected = np.exp(x)
    expected[x < -708.0] = 0.0  # np.exp's subnormals (and 3e-308 at -708.4) become 0
    np.testing.assert_allclose(exp_of_each(x), expected, rtol=4.5e-16)  # 2 units: 4.4e-16


def test_float_from_bits_is_a_bit_cast():
    @njit
    def cast(bits):
        return float_from_bits(bits)

    for value in (1.0, -2.5, 2.0**-1021, np.finfo(np.float64).max):
        assert cast(np.float64(value).view(np.int64)) == value
