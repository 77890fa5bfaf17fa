"""A worker killed with SIGKILL leaves a RUNNING run: the next run of the job marks it failed
(its process is gone) and runs the job again; the report counts only ok runs and says what it
left out."""

import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from experiments.store.liveness import ORPHAN_AFTER_SECONDS, orphan_reason
from reports.build import build_report

SLOW_JOB = ["dataset=hastie_10_2", "method=gbt", "method.n_estimators=3000", "engine=inhouse",
            "eval.curve_every=0", "mlflow.experiment_name=killed"]  # a fit of several seconds


def running_runs(database) -> int:
    if not database.exists():
        return 0
    try:
        with sqlite3.connect(database) as connection:
            query = "select count(*) from runs where status = 'RUNNING'"
            return connection.execute(query).fetchone()[0]
    except sqlite3.OperationalError:
        return 0  # the schema is still being created


@pytest.mark.slow
def test_a_job_killed_with_sigkill_is_failed_as_orphaned_and_runs_again(cli, cli_runs, tmp_path):
    database = tmp_path / "mlflow.db"
    env = {**os.environ, "MLFLOW_TRACKING_URI": f"sqlite:///{database}"}
    command = [sys.executable, "-m", "experiments.run", *SLOW_JOB,
               f"hydra.run.dir={tmp_path / 'killed'}"]
    worker = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while running_runs(database) == 0 and worker.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(0.5)  # the job is loading its data or fitting
    assert worker.poll() is None, "the job ended before it was killed"
    worker.send_signal(signal.SIGKILL)
    worker.wait(timeout=30)
    [orphan] = cli_runs("killed")
    assert orphan.info.status == "RUNNING" and "status" not in orphan.data.tags

    again = cli(*SLOW_JOB)
    assert again.returncode == 0, again.stderr
    runs = {run.info.run_id: run for run in cli_runs("killed")}
    failed = runs[orphan.info.run_id]
    assert failed.info.status == "FAILED"
    assert failed.data.tags["status"] == "failed"
    assert failed.data.tags["error"] == (
        f"orphaned: the process is gone: pid {worker.pid} on {failed.data.tags['host']} "
        "no longer runs"
    )
    [ok] = [run for run in runs.values() if run.data.tags.get("status") == "ok"]
    assert ok.data.tags["run_key"] == failed.data.tags["run_key"]

    out = tmp_path / "report"
    build_report(f"sqlite:///{database}", "killed", out)
    results = (out / "results.csv").read_text()
    assert results.count(failed.data.tags["run_key"]) == 2  # both listed, one in the tables


def test_a_run_on_another_host_is_orphaned_only_when_its_heartbeat_stops():
    tags = {"host": "node-17", "pid": "4242", "heartbeat": "1000"}
    assert orphan_reason(tags, now=1000 + ORPHAN_AFTER_SECONDS - 1) is None
    assert orphan_reason(tags, now=1000 + ORPHAN_AFTER_SECONDS + 1) == (
        f"the process is gone: no heartbeat from pid 4242 on node-17 for "
        f"{ORPHAN_AFTER_SECONDS + 1:.0f} s"
    )


def test_a_live_process_on_this_host_is_not_an_orphan():
    import socket

    tags = {"host": socket.gethostname(), "pid": str(os.getpid()), "heartbeat": f"{time.time()}"}
    assert orphan_reason(tags) is None
