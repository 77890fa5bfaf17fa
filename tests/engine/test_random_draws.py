"""The growers' random draws (random_draws): xoshiro256** and splitmix64 against the outputs of
their authors' reference code, the integer and float draws against uniform distributions."""

import numpy as np
from numba import njit
from scipy.stats import chisquare, kstest

from ensembles.engine.random_draws import DRAW_STATE_WORDS, below, next_word, seed_draws, uniform

# The first outputs of xoshiro256** from the state (1, 2, 3, 4) and of splitmix64 from the seed
# 1234567, as the reference C code (prng.di.unimi.it) prints them.
XOSHIRO_FROM_1_2_3_4 = [11520, 0, 1509978240, 1215971899390074240, 1216172134540287360,
                        607988272756665600, 16172922978634559625, 8476171486693032832,
                        10595114339597558777, 2904607092377533576]
SPLITMIX_FROM_1234567 = [0x599ED017FB08FC85, 0x2C73F08458540FA5, 0x883EBCE5A3F27C77,
                         0x3FBEF740E9177B3F]


@njit
def _words(state, n):
    out = np.empty(n, dtype=np.uint64)
    for i in range(n):
        out[i] = next_word(state)
    return out


@njit
def _below(state, bound, n):
    out = np.empty(n, dtype=np.int64)
    for i in range(n):
        out[i] = below(state, bound)
    return out


@njit
def _uniform(state, n):
    out = np.empty(n)
    for i in range(n):
        out[i] = uniform(state)
    return out


def _seeded(seed):
    state = np.empty(DRAW_STATE_WORDS, dtype=np.uint64)
    seed_draws(state, seed)
    return state


def test_xoshiro256starstar_gives_the_reference_outputs():
    state = np.array([1, 2, 3, 4], dtype=np.uint64)
    assert _words(state, 10).tolist() == XOSHIRO_FROM_1_2_3_4


def test_the_seed_fills_the_state_with_splitmix64():
    assert _seeded(1234567).tolist() == SPLITMIX_FROM_1234567


def test_below_draws_every_integer_under_its_bound_equally_often():
    draws = _below(_seeded(0), 7, 70_000)
    assert draws.min() == 0 and draws.max() == 6
    assert chisquare(np.bincount(draws, minlength=7)).pvalue > 1e-3
    large = 2**31 + 1  # 2^32 mod n = 2^31 - 1: nearly half the products are redrawn
    draws = _below(_seeded(1), large, 100_000)
    assert draws.min() >= 0 and draws.max() < large
    assert chisquare(np.bincount(draws * 16 // large, minlength=16)).pvalue > 1e-3


def test_uniform_draws_are_uniform_in_the_unit_interval():
    draws = _uniform(_seeded(2), 100_000)
    assert draws.min() >= 0.0 and draws.max() < 1.0
    assert kstest(draws, "uniform").pvalue > 1e-3


def test_seeds_give_their_own_streams():
    assert not np.array_equal(_words(_seeded(3), 4), _words(_seeded(4), 4))
    assert np.array_equal(_words(_seeded(3), 4), _words(_seeded(3), 4))
