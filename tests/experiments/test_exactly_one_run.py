"""Exactly one run per job: two identical sweeps started at once share the jobs through the
jobs' claims; a sweep killed with SIGKILL leaves runs that the next sweep fails as orphaned;
a claim whose holder is gone gives way; the summary counts a retried job by its best outcome."""

import os
import signal
import subprocess
import sys
import time
from collections import Counter

import mlflow
import pytest
from mlflow import MlflowClient

from experiments.store import claims
from experiments.store.sweep_record import outcome_counts
from experiments.store.uri import sqlite_creation_lock

SWEEP = ["-m", "dataset=wine,diabetes", "method=gbt,random_forest", "engine=inhouse,sklearn",
         "seed=0", "method.n_estimators=10"]  # 8 jobs


def summary(stderr: str) -> Counter:
    """The counts of a sweep's summary line: {"ok": 14, "resumed": 2, ...}."""
    [line] = [line for line in stderr.splitlines() if line.startswith("sweep: ")][-1:]
    return Counter({name: int(n) for n, name in
                    (part.split() for part in line.split(" s: ")[1].split(", "))})  # fmt: skip


def sweep_process(tmp_path, *overrides: str, experiment: str) -> subprocess.Popen:
    env = {**os.environ, "MLFLOW_TRACKING_URI": f"sqlite:///{tmp_path / 'mlflow.db'}"}
    command = [sys.executable, "-m", "experiments.run", *overrides,
               f"mlflow.experiment_name={experiment}"]  # fmt: skip
    return subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip


def all_runs(tmp_path, experiment: str) -> list:
    """The experiment's runs, read under the lab's creation lock: a reader that opens a store
    the sweep is creating would create its tables too, and one of the two fails."""
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    with sqlite_creation_lock(uri):
        client = MlflowClient(uri)
        found = client.get_experiment_by_name(experiment)
        return client.search_runs([found.experiment_id], max_results=1000)


def assert_one_ok_run_per_job(runs: list, n_jobs: int) -> None:
    jobs = [run for run in runs if run.data.tags.get("status") != "sweep"]
    ok = Counter(run.data.tags["run_key"] for run in jobs if run.data.tags["status"] == "ok")
    assert len(ok) == n_jobs and set(ok.values()) == {1}
    assert not [run for run in runs if run.info.status == "RUNNING"]


@pytest.mark.slow
def test_two_identical_sweeps_at_once_run_each_job_once(tmp_path):
    first = sweep_process(tmp_path, *SWEEP, experiment="twice")
    second = sweep_process(tmp_path, *SWEEP, experiment="twice")
    outcomes = [process.communicate(timeout=600) for process in (first, second)]
    assert first.returncode == second.returncode == 0, outcomes
    runs = all_runs(tmp_path, "twice")
    assert_one_ok_run_per_job(runs, 8)
    counts = [summary(stderr) for _, stderr in outcomes]
    assert counts[0]["ok"] + counts[1]["ok"] == 8
    assert counts[0]["ok"] + counts[0]["resumed"] == counts[1]["ok"] + counts[1]["resumed"] == 8
    assert {run.data.tags["status"] for run in runs} == {"ok", "sweep"}
    stdout = outcomes[0][0] + outcomes[1][0]
    claimed = stdout.count("resumed (claimed by pid ")
    assert claimed + stdout.count(" resumed: run_key ") == 8
    assert MlflowClient(f"sqlite:///{tmp_path / 'mlflow.db'}").search_registered_models() == []


@pytest.mark.slow
def test_a_sweep_killed_with_sigkill_is_failed_by_the_next_sweep(tmp_path):
    slow = ["-m", "dataset=hastie_10_2", "method=gbt", "method.n_estimators=1000",
            "engine=inhouse", "eval.curve_every=0", "seed=0"]  # fmt: skip
    killed = sweep_process(tmp_path, *slow, experiment="killed")
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and killed.poll() is None:
        try:
            if any(run.data.tags.get("status") is None for run in all_runs(tmp_path, "killed")):
                break  # a job's run is open: the job is loading data or fitting
        except Exception:  # noqa: BLE001 - the store or the experiment is being created
            pass
        time.sleep(0.2)
    assert killed.poll() is None, f"the sweep ended before it was killed: {killed.communicate()}"
    killed.send_signal(signal.SIGKILL)
    killed.communicate(timeout=30)
    left = all_runs(tmp_path, "killed")
    assert {run.info.status for run in left} == {"RUNNING"}  # the sweep's run and a job's

    again = sweep_process(tmp_path, *slow, experiment="killed")
    _, stderr = again.communicate(timeout=600)
    assert again.returncode == 0, stderr
    assert f"0 journaled outcomes written to the store, {len(left)} runs of dead" in stderr
    assert summary(stderr) == Counter(ok=1, orphaned=len(left))
    runs = {run.info.run_id: run for run in all_runs(tmp_path, "killed")}
    assert_one_ok_run_per_job(list(runs.values()), 1)
    for run in left:
        failed = runs[run.info.run_id]
        assert failed.info.status == "FAILED"
        assert failed.data.tags["error"] == (
            f"orphaned: the process is gone: pid {killed.pid} on {failed.data.tags['host']} "
            "no longer runs"
        )
    [dead_sweep] = [run for run in left if run.data.tags.get("status") == "sweep"]
    assert runs[dead_sweep.info.run_id].data.tags["status"] == "sweep"  # still the sweep's run
    [sweep] = [run for run in runs.values() if run.data.tags["status"] == "sweep"
               and run.info.status == "FINISHED"]  # fmt: skip
    assert {runs[run.info.run_id].data.tags["orphan_found_by"] for run in left} == {
        sweep.info.run_id}


def test_a_live_claim_holds_and_a_dead_holders_claim_gives_way(tmp_path):
    mlflow.set_tracking_uri(f"sqlite:///{tmp_path / 'mlflow.db'}")
    key = "0" * 64
    name, holder = claims.try_claim("1", key, "sweep-a")
    assert name == f"lab-claim.1.{key}.0" and holder == ""
    again, holder = claims.try_claim("1", key, "sweep-b")
    assert again is None and holder == f"pid {os.getpid()} on {os.uname().nodename} (sweep sweep-a)"
    client = MlflowClient()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    client.set_registered_model_tag(name, "pid", dead)  # its holder died with SIGKILL
    taken, holder = claims.try_claim("1", key, "sweep-b")
    assert taken == f"lab-claim.1.{key}.1" and holder == ""
    assert [model.name for model in client.search_registered_models()] == [taken]  # stale: gone
    claims.release(taken)
    claims.release(taken)  # released twice (another claimer cleared it): no error
    assert client.search_registered_models() == []


def test_a_job_retried_after_a_killed_attempt_counts_once_by_its_best_outcome():
    outcomes = [("a", "failed"), ("a", "ok"), ("b", "skipped"), ("c", "failed")]
    assert outcome_counts(outcomes, n_jobs=4) == {"ok": 1, "skipped": 1, "failed": 1,
                                                  "resumed": 1}  # fmt: skip
