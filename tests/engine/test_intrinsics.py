"""The LLVM intrinsics: each against its plain-Python equivalent and a value by hand, the
arrays each refuses at typing time, and a fit under NUMBA_DISABLE_JIT equal to the jitted."""

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from numba import njit, prange, set_num_threads
from numba.core.errors import TypingError

from ensembles.engine.prefetch import _prefetch_python, prefetch
from ensembles.engine.simd import _add_lanes_python, add_four_lanes, add_two_lanes
from ensembles.engine.work_queue import WORKERS, _next_item_python, next_item

REPO = Path(__file__).resolve().parents[2]


@njit
def _jit_add_four_lanes(array, index):
    add_four_lanes(array, index, 1.5, -2.0, 3, 0.25)


@njit
def _jit_add_two_lanes(array, index):
    add_two_lanes(array, index, 1.5, -2)


LANE_ADDS = {"add_four_lanes": (_jit_add_four_lanes, (1.5, -2.0, 3, 0.25)),
             "add_two_lanes": (_jit_add_two_lanes, (1.5, -2))}


@njit
def _jit_prefetch(array, index):
    prefetch(array, index)
    return array[index]


@njit
def _jit_next_items(counter, n):
    items = np.empty(n, dtype=np.int64)
    for i in range(n):
        items[i] = next_item(counter)
    return items


@njit(parallel=True)
def _jit_claims(n_items):
    """How often each item is taken when the threads share a queue (work_queue's loop)."""
    claims = np.zeros(n_items, dtype=np.int64)
    counter = np.zeros(1, dtype=np.int64)
    for _ in prange(WORKERS):
        item = next_item(counter)
        while item < n_items:
            claims[item] += 1
            item = next_item(counter)
    return claims


@pytest.mark.parametrize("name", LANE_ADDS)
def test_a_lane_add_adds_its_lanes_at_the_index(name):
    jit_add, lanes = LANE_ADDS[name]
    array = np.arange(8, dtype=np.float64)
    by_hand = array.copy()
    by_hand[3:3 + len(lanes)] += lanes
    python = array.copy()
    _add_lanes_python(python, np.uint64(3), *lanes)
    jit_add(array, np.uint64(3))
    assert np.array_equal(array, by_hand)
    assert np.array_equal(python, by_hand)


@pytest.mark.parametrize("name", LANE_ADDS)
@pytest.mark.parametrize("array", [np.zeros(8, dtype=np.float32), np.zeros(16)[::2],
                                   np.zeros((2, 4))], ids=["float32", "strided", "2-d"])
def test_a_lane_add_refuses_what_it_would_write_past(array, name):
    """A float32 or strided array would be written 8 contiguous bytes a lane: a typing error."""
    with pytest.raises(TypingError, match=name):
        LANE_ADDS[name][0](array, np.uint64(0))


def test_prefetch_reads_nothing_and_changes_nothing():
    array = np.arange(10, dtype=np.uint8)
    before = array.copy()
    assert _jit_prefetch(array, 7) == 7
    assert _prefetch_python(array, 7) is None
    assert np.array_equal(array, before)
    assert _jit_prefetch(np.arange(20.0)[::2], 3) == 6.0  # a strided view: strides applied


def test_prefetch_is_declared_with_the_name_of_this_llvmlite():
    """llvm.prefetch is declared by llvmlite's own mangling (p0i8 where its IR has typed
    pointers, p0 where opaque), so LLVM takes it for the intrinsic: a call survives
    optimization, and on x86 it is a prefetcht0 instruction (read, keep in all caches)."""
    _jit_prefetch(np.zeros(4), 1)
    llvm_ir = "".join(_jit_prefetch.inspect_llvm().values())
    assert "call void @llvm.prefetch.p0" in llvm_ir
    if platform.machine().lower() in ("x86_64", "amd64"):
        assert "prefetcht0" in "".join(_jit_prefetch.inspect_asm().values())


def test_prefetch_refuses_a_2d_array_and_a_float_index():
    with pytest.raises(TypingError, match="prefetch"):
        _jit_prefetch(np.zeros((2, 2)), 0)
    with pytest.raises(TypingError, match="prefetch"):
        _jit_prefetch(np.zeros(4), 1.0)


def test_next_item_counts_up_from_the_counter():
    counter = np.array([5], dtype=np.int64)
    assert list(_jit_next_items(counter, 3)) == [5, 6, 7]
    assert counter[0] == 8
    python = np.array([5], dtype=np.int64)
    assert [_next_item_python(python) for _ in range(3)] == [5, 6, 7]
    assert python[0] == 8


def test_next_item_gives_every_item_to_exactly_one_thread():
    set_num_threads(2)
    assert np.array_equal(_jit_claims(1000), np.ones(1000, dtype=np.int64))


@pytest.mark.parametrize("counter", [np.zeros(2, dtype=np.int32), np.zeros(4)],
                         ids=["int32", "float64"])
def test_next_item_refuses_a_counter_that_is_not_int64(counter):
    """An 8-byte atomic add on an int32 counter would write past it: a typing error."""
    with pytest.raises(TypingError, match="next_item"):
        _jit_next_items(counter, 1)


FIT = """
import json, sys
import numpy as np
from ensembles import AdaBoostClassifier, GradientBoostingClassifier, RandomForestClassifier
rng = np.random.default_rng(0)
X = rng.normal(size=(120, 3))
X[rng.uniform(size=X.shape) < 0.1] = np.nan
y = (np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 1]) ** 2 > 0.5).astype(int)
models = [GradientBoostingClassifier(n_estimators=3, max_depth=3, random_state=0),
          RandomForestClassifier(n_estimators=2, max_depth=4, random_state=0),
          AdaBoostClassifier(n_estimators=3, random_state=0)]
json.dump([model.fit(X, y).predict_proba(X).tolist() for model in models], sys.stdout)
"""


def _fit_in_subprocess(disable_jit):
    env = dict(os.environ, PYTHONPATH=str(REPO), NUMBA_DISABLE_JIT=str(int(disable_jit)))
    done = subprocess.run([sys.executable, "-c", FIT], env=env, capture_output=True,
                          text=True, check=True, timeout=600)
    return json.loads(done.stdout)


def test_a_fit_without_jit_equals_the_jitted_fit():
    """NUMBA_DISABLE_JIT=1 runs the engine in plain Python (the intrinsics' Python
    equivalents): the same probabilities to the bit, so a debugger steps through the code
    that runs."""
    assert _fit_in_subprocess(True) == _fit_in_subprocess(False)
