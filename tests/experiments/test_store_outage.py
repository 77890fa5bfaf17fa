"""The store down longer than the client's retries: the jobs that meet the outage fail without
raising, their outcomes go to the sweep's journal, the sweep ends with its summary line; the
next sweep writes the journal to the store and runs those jobs again: one ok run per job, no
run RUNNING, nothing lost."""

import os
import signal
import subprocess
import sys
import time
from collections import Counter

import pytest
from mlflow import MlflowClient
from mlflow.exceptions import MlflowException

from experiments.run import run_job
from experiments.store import journal
from experiments.store.team_server import wait_until_ready
from experiments.store.uri import JOBS_OFF

SWEEP = ["-m", "dataset=wine,breast_cancer", "method=gbt", "method.n_estimators=200",
         "engine=inhouse", "eval.curve_every=0", "seed=0,1,2"]  # 6 jobs of about a second
IMPATIENT = {"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "1", "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "0",
             "MLFLOW_HTTP_REQUEST_TIMEOUT": "5"}  # fmt: skip


class TrackingServer:
    """`mlflow server` on a sqlite file, stopped and started again by the test."""

    def __init__(self, folder, port: int) -> None:
        self.folder, self.url = folder, f"http://127.0.0.1:{port}"
        self.command = [sys.executable, "-m", "mlflow", "server", "--backend-store-uri",
                        f"sqlite:///{folder / 'server.db'}", "--artifacts-destination",
                        str(folder / "artifacts"), "--host", "127.0.0.1", "--port", str(port),
                        "--workers", "1"]  # fmt: skip

    def start(self) -> None:
        env = {**os.environ, **JOBS_OFF}  # no job runner processes: the lab has no GenAI jobs
        self.process = subprocess.Popen(self.command, cwd=self.folder, start_new_session=True,
                                        env=env, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)  # fmt: skip
        wait_until_ready(self.url, self.process)

    def stop(self) -> None:
        """Gone at once, as in an outage: mlflow and its uvicorn workers (its process group)."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=60)


def runs(url: str) -> list:
    client = MlflowClient(url)
    experiment = client.get_experiment_by_name("outage")
    return [] if experiment is None else client.search_runs([experiment.experiment_id])


def sweep(tmp_path, url: str) -> subprocess.Popen:
    env = {**os.environ, **IMPATIENT, "MLFLOW_TRACKING_URI": url}
    command = [sys.executable, "-m", "experiments.run", *SWEEP, "mlflow.experiment_name=outage"]
    return subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip


@pytest.mark.slow
def test_a_store_outage_is_journaled_and_replayed_by_the_next_sweep(tmp_path, free_port):
    server = TrackingServer(tmp_path, free_port())
    server.start()
    try:
        first = sweep(tmp_path, server.url)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and first.poll() is None:
            if sum(run.data.tags.get("status") == "ok" for run in runs(server.url)) >= 2:
                break
            time.sleep(0.2)
        assert first.poll() is None, "the sweep ended before the outage"
        server.stop()
        _, stderr = first.communicate(timeout=600)
        last = stderr.strip().splitlines()[-2:]
        assert first.returncode == 1, stderr[-3000:]
        assert last[1].startswith("error: ") and "jobs failed" in last[1]
        assert last[0].startswith("sweep: 6 jobs in ") and "the store is unreachable" in last[0]
        counted = Counter({name: int(n) for n, name in (part.split() for part in
                          last[0].split(" s: ")[1].split(" (")[0].split(", "))})  # fmt: skip
        assert counted["ok"] >= 1 and counted["ok"] + counted["failed"] == 6
        journals = list((tmp_path / "multirun" / "journal").glob("*.jsonl"))
        assert len(journals) == 1 and "Traceback" not in stderr

        server.start()
        again = sweep(tmp_path, server.url)
        _, stderr = again.communicate(timeout=600)
        assert again.returncode == 0, stderr
        stored = runs(server.url)
        assert not [run for run in stored if run.info.status == "RUNNING"]
        jobs = [run for run in stored if run.data.tags["status"] != "sweep"]
        ok = Counter(run.data.tags["run_key"] for run in jobs if run.data.tags["status"] == "ok")
        assert len(ok) == 6 and set(ok.values()) == {1}
        failed = [run for run in jobs if run.data.tags["status"] == "failed"]
        journaled = [run for run in failed if run.data.tags["error"].startswith(
            "the store did not take the job's outcome: ")]  # fmt: skip
        # a run the store created as it died, whose id never reached its job: the orphan check's
        orphaned = [run for run in failed if run.data.tags["error"].startswith(
            "orphaned: the process is gone") and run.data.tags["orphan_found_by"]]  # fmt: skip
        assert len(journaled) + len(orphaned) == len(failed)
        # the runs the outage left open, and the sweep's run
        assert (f"{len(journaled) + 1} journaled outcomes written to the store, "
                f"{len(orphaned)} runs of dead processes failed") in stderr  # fmt: skip
        [outage] = [run for run in stored if run.data.tags["status"] == "sweep"
                    and run.info.status == "FAILED"]  # fmt: skip
        assert outage.data.metrics["jobs_failed"] == counted["failed"]
        assert not list((tmp_path / "multirun" / "journal").glob("*.jsonl"))
    finally:
        server.stop()


def test_a_run_whose_end_the_store_lost_is_journaled_by_its_id(compose_job, runs_of, tmp_path,
                                                              monkeypatch):  # fmt: skip
    """MLflow forgets its active run before it writes the run's end: a store lost right then
    still leaves the run's id in the journal, so the next sweep fails that run (its status
    tag said ok) instead of leaving it to the orphan check."""
    monkeypatch.chdir(tmp_path)
    cfg = compose_job("dataset=iris", "method=gbt", "method.n_estimators=3", "engine=sklearn")
    ends = MlflowClient.set_terminated

    def store_gone(*args, **kwargs):
        raise MlflowException("connection refused")

    monkeypatch.setattr(MlflowClient, "set_terminated", store_gone)
    assert run_job(cfg) == "failed"
    monkeypatch.setattr(MlflowClient, "set_terminated", ends)
    [run] = runs_of(cfg)
    assert run.info.status == "RUNNING" and run.data.tags["status"] == "ok"
    [entry] = journal.entries(tmp_path / "multirun" / "journal" / journal.SINGLE_JOBS)
    assert entry["run_id"] == run.info.run_id and not entry["recorded"]
    assert journal.replay("multirun/journal", cfg.mlflow.tracking_uri) == 1
    [run] = runs_of(cfg)
    assert run.info.status == "FAILED" and run.data.tags["status"] == "failed"
    assert run.data.tags["error"] == (
        "the store did not take the job's outcome: MlflowException: connection refused")
