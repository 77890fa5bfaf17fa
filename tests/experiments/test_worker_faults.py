"""A joblib worker killed with SIGKILL mid-sweep breaks loky's pool, which kills the batch's other
workers: the sweep fails the runs they left RUNNING as orphaned and launches the batch again
(resume skips the jobs that ended); a second death records the batch's unfinished jobs as
failed. Either way the sweep ends with a summary line true to the store and an exit status true
to it."""

import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import mlflow
import pytest

EXPERIMENT = "worker_killed"
SLOW = ("1500", "1501")  # gbt rounds on hastie_10_2: a fit of a second or more each
SWEEP = ["-m", "hydra/launcher=joblib", "hydra.launcher.n_jobs=2", "dataset=hastie_10_2",
         "method=gbt", f"method.n_estimators=10,11,12,13,{','.join(SLOW)}", "engine=inhouse",
         "eval.curve_every=0", f"mlflow.experiment_name={EXPERIMENT}"]  # fmt: skip
N_JOBS = 6  # the fast ones first: they end before both workers run a slow one
SUMMARY = re.compile(r"sweep: (\d+) jobs in \d+ s: (.*)")


def start_sweep(tmp_path: Path) -> subprocess.Popen:
    env = {**os.environ, "MLFLOW_TRACKING_URI": f"sqlite:///{tmp_path / 'mlflow.db'}"}
    env.pop("HYDRA_FULL_ERROR", None)
    command = [sys.executable, "-m", "experiments.run", *SWEEP,
               f"hydra.sweep.dir={tmp_path / 'multirun'}"]  # fmt: skip
    return subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip


def running_slow_jobs(database: Path) -> dict[str, str]:
    """run id -> pid of the RUNNING runs of the slow jobs (read from sqlite while the sweep
    writes it)."""
    query = """select runs.run_uuid, tags.value from runs
               join params on params.run_uuid = runs.run_uuid
               join tags on tags.run_uuid = runs.run_uuid
               where runs.status = 'RUNNING' and tags.key = 'pid'
               and params.key = 'method.n_estimators' and params.value in (?, ?)"""
    try:
        with sqlite3.connect(database) as connection:
            return dict(connection.execute(query, SLOW).fetchall())
    except sqlite3.OperationalError:
        return {}  # the store or its schema does not exist yet


def kill_a_slow_job(sweep: subprocess.Popen, database: Path, seen: set[str]) -> tuple[str, str]:
    """Once both slow jobs run in runs not seen before, SIGKILL the worker of one; return its
    run id and pid, and add both runs to `seen`."""
    deadline = time.monotonic() + 240
    while len(running := set(running_slow_jobs(database).items()) - {*seen}) < 2:
        if sweep.poll() is not None:
            pytest.fail(f"the sweep ended before both slow jobs ran: {sweep.stderr.read()[-3000:]}")
        assert time.monotonic() < deadline, "both slow jobs never ran at once"
        time.sleep(0.1)
    run_id, pid = sorted(running)[0]
    os.kill(int(pid), signal.SIGKILL)
    seen.update(running)
    return run_id, pid


def sweep_of(database: Path) -> tuple[str, list]:
    """The sweep run's id and its job runs (tag sweep_id)."""
    mlflow.set_tracking_uri(f"sqlite:///{database}")
    [sweep] = mlflow.search_runs(experiment_names=[EXPERIMENT], output_format="list",
                                 filter_string="tags.status = 'sweep'")  # fmt: skip
    runs = mlflow.search_runs(experiment_names=[EXPERIMENT], output_format="list",
                              filter_string=f"tags.sweep_id = '{sweep.info.run_id}'")
    return sweep.info.run_id, runs


def true_counts(sweep_id: str, runs: list) -> dict[str, int]:
    """The summary's counts from the stored runs, by job (run_key): a job's outcome is the status
    of its latest run in the sweep (a retried job that ended ok is ok), resumed when it has none;
    orphaned: the runs this sweep failed as orphaned."""
    latest = {}
    for run in sorted(runs, key=lambda run: run.info.start_time):
        latest[run.data.tags["run_key"]] = run.data.tags["status"]
    outcomes = list(latest.values())
    counts = {status: outcomes.count(status) for status in ("ok", "skipped", "failed")}
    counts["resumed"] = N_JOBS - len(latest)
    counts["orphaned"] = sum(run.data.tags.get("orphan_found_by") == sweep_id for run in runs)
    return counts


def summary_counts(stderr: str) -> dict[str, int]:
    """The counts of the sweep's summary line, the last line of its stderr but the error line
    that follows it when a job failed."""
    lines = stderr.strip().splitlines()
    if lines[-1].startswith("error: "):
        lines.pop()
    summary = SUMMARY.fullmatch(lines[-1])
    assert summary, stderr[-3000:]
    assert int(summary.group(1)) == N_JOBS
    return {name: int(n) for n, name in re.findall(r"(\d+) (\w+)", summary.group(2))}


def assert_orphaned(run, pid: str, sweep_id: str) -> None:
    assert run.info.status == "FAILED"
    assert run.data.tags["status"] == "failed"
    assert run.data.tags["error"].startswith(f"orphaned: the process is gone: pid {pid} ")
    assert run.data.tags["orphan_found_by"] == sweep_id


@pytest.mark.slow
def test_a_killed_joblib_worker_costs_its_jobs_not_the_sweep(tmp_path):
    start = time.monotonic()
    sweep = start_sweep(tmp_path)
    seen: set[tuple[str, str]] = set()
    killed_run, killed_pid = kill_a_slow_job(sweep, tmp_path / "mlflow.db", seen)
    stdout, stderr = sweep.communicate(timeout=240)
    seconds = time.monotonic() - start

    sweep_id, runs = sweep_of(tmp_path / "mlflow.db")
    ok = Counter(run.data.tags["run_key"] for run in runs if run.data.tags["status"] == "ok")
    assert len(ok) == N_JOBS and set(ok.values()) == {1}, stderr  # one ok run per job
    assert all(run.info.status != "RUNNING" for run in runs)
    by_id = {run.info.run_id: run for run in runs}
    assert_orphaned(by_id[killed_run], killed_pid, sweep_id)
    [(other_run, other_pid)] = [(run, pid) for run, pid in seen if run != killed_run]
    assert_orphaned(by_id[other_run], other_pid, sweep_id)  # loky killed the pool's other worker
    died = re.findall(r"a joblib worker died \(exit codes \{SIGKILL\(-9\)\}\): the runs of pid "
                      r"(\d+), (\d+) failed as orphaned; launching the batch of 6 jobs again",
                      stdout)  # fmt: skip
    assert [set(pids) for pids in died] == [{killed_pid, other_pid}], stdout

    counts = summary_counts(stderr)
    assert counts == true_counts(sweep_id, runs), stderr
    assert (counts["ok"], counts["orphaned"]) == (N_JOBS, 2)
    assert sweep.returncode == (1 if counts["failed"] else 0), stderr
    print(f"a killed worker: sweep of {seconds:.0f} s; {stderr.strip().splitlines()[-1]}")


@pytest.mark.slow
def test_a_worker_killed_again_in_the_relaunch_fails_the_batchs_unfinished_jobs(tmp_path):
    start = time.monotonic()
    sweep = start_sweep(tmp_path)
    seen: set[tuple[str, str]] = set()
    first = kill_a_slow_job(sweep, tmp_path / "mlflow.db", seen)
    second = kill_a_slow_job(sweep, tmp_path / "mlflow.db", seen)  # in the relaunch
    stdout, stderr = sweep.communicate(timeout=240)
    seconds = time.monotonic() - start

    sweep_id, runs = sweep_of(tmp_path / "mlflow.db")
    assert all(run.info.status != "RUNNING" for run in runs)
    by_id = {run.info.run_id: run for run in runs}
    for run_id, pid in seen:  # both attempts of both slow jobs
        assert_orphaned(by_id[run_id], pid, sweep_id)
    assert {first[0], second[0]} <= set(by_id)
    recorded = [run for run in runs if run.data.tags.get("error", "").startswith("worker died: ")]
    assert len(recorded) == 2 and {run.info.status for run in recorded} == {"FAILED"}
    assert {run.data.tags["run_key"] for run in recorded} == {
        by_id[run_id].data.tags["run_key"] for run_id, _ in seen
    }
    assert "exit codes {SIGKILL(-9)}" in recorded[0].data.tags["error"]
    ok = Counter(run.data.tags["run_key"] for run in runs if run.data.tags["status"] == "ok")
    assert len(ok) == N_JOBS - 2 and set(ok.values()) == {1}  # the fast jobs, once each
    assert re.search(r"a joblib worker died again \(exit codes \{SIGKILL\(-9\)\}\): the runs of "
                     r"pid \d+, \d+ failed as orphaned; 2 unfinished jobs of the batch recorded "
                     r"as failed; the sweep goes on", stdout), stdout  # fmt: skip

    counts = summary_counts(stderr)
    assert counts == true_counts(sweep_id, runs), stderr
    assert (counts["ok"], counts["failed"], counts["orphaned"]) == (N_JOBS - 2, 2, 4)
    assert sweep.returncode == 1
    assert stderr.strip().splitlines()[-1] == f"error: 2 of {N_JOBS} jobs failed"
    print(f"a worker killed twice: sweep of {seconds:.0f} s; {stderr.strip().splitlines()[-2]}")
