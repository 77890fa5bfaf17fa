"""threads: the thread count of a fit by its table's size and the machine's load."""

import os
import subprocess
import sys

import numba
import pytest

from ensembles.engine import threads
from ensembles.engine.threads import SERIAL_TABLE, SHARED_TABLE, idle_cores, table_threads

CORES = len(os.sched_getaffinity(0))
POOL = numba.config.NUMBA_NUM_THREADS


def fake_proc(root, running: int, states: str) -> str:
    """A /proc of a machine with `running` runnable threads whose own process has one
    thread per letter of `states` (R running, S sleeping); returns its path."""
    (root / "loadavg").write_text(f"0.52 0.58 0.59 {running}/467 12345\n")
    for task, state in enumerate(states, start=100):
        (root / "self" / "task" / str(task)).mkdir(parents=True)
        (root / "self" / "task" / str(task) / "stat").write_text(
            f"{task} (python (x) 3) {state} 1 {task} {task} 0 -1 4194560 70 0 0 0\n")
    return str(root)


@pytest.mark.parametrize("running, states, others", [
    (1, "R", 0),  # only the thread that looks
    (3, "RSR", 1),  # two of ours run (the caller, a pool thread spinning), one other
    (5, "RSS", 4),
    (1, "RRR", 0),  # ours woke after the count: never fewer than none
])
def test_idle_cores_are_the_cores_less_the_other_processes_runnable_threads(
        tmp_path, running, states, others):
    assert idle_cores(fake_proc(tmp_path, running, states)) == CORES - others


def test_idle_cores_is_none_where_proc_cannot_tell(tmp_path):
    assert idle_cores(str(tmp_path / "missing")) == 0
    (tmp_path / "self" / "task").mkdir(parents=True)
    (tmp_path / "loadavg").write_text("0.1 0.1 0.1\n")
    assert idle_cores(str(tmp_path)) == 0


@pytest.mark.skipif(not os.path.exists("/proc/loadavg"), reason="reads Linux's /proc")
def test_a_busy_process_beside_this_one_takes_an_idle_core():
    spinning = subprocess.Popen([sys.executable, "-c",
                                 "print('spinning', flush=True)\nwhile True: pass"],
                                stdout=subprocess.PIPE, text=True)
    try:
        assert spinning.stdout.readline() == "spinning\n"
        assert idle_cores() <= CORES - 1
    finally:
        spinning.kill()
        spinning.wait()


@pytest.mark.parametrize("size, idle, expected", [
    (SERIAL_TABLE - 1, 2, 1),
    (SERIAL_TABLE, 2, 2),
    (SERIAL_TABLE, 1, 1),
    (SERIAL_TABLE, 0, 1),  # never fewer than one
    (SHARED_TABLE - 1, 1, 1),
    (SHARED_TABLE, 0, 2),  # a large table: n_jobs whatever the load
    (None, 0, 2),  # predictions and forests
])
def test_table_threads_follow_the_size_and_on_a_mid_sized_table_the_idle_cores(
        monkeypatch, size, idle, expected):
    if POOL < 2:
        pytest.skip("needs a numba pool of two threads")
    monkeypatch.setattr(threads, "idle_cores", lambda: idle)
    assert table_threads(2, size) == expected
    assert table_threads(1, size) == 1
