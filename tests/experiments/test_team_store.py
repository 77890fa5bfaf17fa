"""A team store for real: PostgreSQL (pgserver) behind `mlflow server` on a free local port; a
parallel sweep logs every run there, resumes from it, survives a server restart, and feeds the
report."""

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import pytest
from mlflow import MlflowClient

from experiments.store.team_server import TeamServer
from reports.build import build_report

SWEEP = ["-m", "dataset=wine,diabetes", "method=random_forest,gbt", "engine=inhouse,sklearn",
         "seed=0,1,2", "method.n_estimators=10"]  # 24 jobs


@pytest.fixture(scope="module")
def server(free_port):
    """PostgreSQL and mlflow server for the whole module (a test may restart mlflow server), in
    a data dir whose parents every user may search: as root, PostgreSQL runs as another user,
    who cannot enter pytest's own temp dirs (mode 0700)."""
    data = Path(tempfile.mkdtemp(prefix="team-"))
    running = TeamServer(data, port=free_port(), output=subprocess.DEVNULL)
    running.start()
    yield running
    running.stop()
    shutil.rmtree(data, ignore_errors=True)


def job_runs(url: str, experiment: str) -> list:
    client = MlflowClient(url)
    found = client.get_experiment_by_name(experiment)
    runs = client.search_runs([found.experiment_id], max_results=1000)
    return [run for run in runs if run.data.tags.get("status") != "sweep"]


@pytest.mark.slow
def test_a_parallel_sweep_into_the_team_store_logs_resumes_and_reports(cli, server, tmp_path):
    sweep = [*SWEEP, "hydra/launcher=joblib", "hydra.launcher.n_jobs=2",
             f"mlflow.tracking_uri={server.url}", "mlflow.experiment_name=team"]
    first = cli(*sweep)
    assert first.returncode == 0, first.stderr
    runs = job_runs(server.url, "team")
    assert len(runs) == 24 and {run.data.tags["status"] for run in runs} == {"ok"}
    assert len({run.data.tags["run_key"] for run in runs}) == 24
    client = MlflowClient(server.url)
    for run in runs:
        assert {"fit_seconds", "peak_rss_mb", "n_trees"} <= run.data.metrics.keys()
        assert [a.path for a in client.list_artifacts(run.info.run_id)] == ["config.yaml"]
    boosted = [run for run in runs if run.data.tags["method"] == "gbt"]
    regression = boosted[0].data.tags["task"] == "regression"
    curve = "curve_test_rmse" if regression else "curve_test_error"
    assert len(client.get_metric_history(boosted[0].info.run_id, curve)) >= 2

    again = cli(*sweep)
    assert again.returncode == 0, again.stderr
    assert again.stderr.strip().splitlines()[-1].endswith(": 0 ok, 0 skipped, 0 failed, "
                                                          "24 resumed, 0 orphaned")
    assert len(job_runs(server.url, "team")) == 24

    paths = build_report(server.url, "team", tmp_path / "report")
    assert "| wine" in (tmp_path / "report" / "tables.md").read_text()
    assert any(path.suffix == ".png" for path in paths)


@pytest.mark.slow
def test_a_server_restart_mid_sweep_loses_nothing(server, tmp_path):
    env = {**os.environ, "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "10",
           "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "1"}
    command = [sys.executable, "-m", "experiments.run", *SWEEP,
               f"mlflow.tracking_uri={server.url}", "mlflow.experiment_name=restart",
               f"hydra.sweep.dir={tmp_path / 'multirun'}"]
    sweep = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and sweep.poll() is None:
        try:
            if len(job_runs(server.url, "restart")) >= 4:
                break
        except Exception:  # the experiment does not exist yet
            pass
        time.sleep(0.5)
    assert sweep.poll() is None, "the sweep ended before the restart"
    server.stop_mlflow()
    time.sleep(3)
    server.start_mlflow()
    _, stderr = sweep.communicate(timeout=600)
    assert sweep.returncode == 0, stderr
    runs = job_runs(server.url, "restart")
    assert Counter(run.data.tags.get("status") for run in runs) == {"ok": 24}
    assert len({run.data.tags["run_key"] for run in runs}) == 24


@pytest.mark.slow
def test_two_identical_sweeps_at_once_into_the_team_store_run_each_job_once(server, tmp_path):
    env = {**os.environ, "MLFLOW_TRACKING_URI": server.url}
    command = [sys.executable, "-m", "experiments.run", "-m", "dataset=wine,diabetes",
               "method=gbt,random_forest", "engine=inhouse,sklearn", "method.n_estimators=10",
               "seed=0", "mlflow.experiment_name=at_once"]  # 8 jobs  # fmt: skip
    sweeps = [subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True) for _ in range(2)]  # fmt: skip
    outputs = [sweep.communicate(timeout=600) for sweep in sweeps]
    assert [sweep.returncode for sweep in sweeps] == [0, 0], outputs
    runs = job_runs(server.url, "at_once")
    ok = Counter(run.data.tags["run_key"] for run in runs if run.data.tags["status"] == "ok")
    assert len(ok) == 8 and set(ok.values()) == {1} and len(runs) == 8
    lines = [stderr.strip().splitlines()[-1] for _, stderr in outputs]
    oks = [int(line.split(" s: ")[1].split(" ok")[0]) for line in lines]
    assert sum(oks) == 8
    assert all(f"{8 - n} resumed" in line for n, line in zip(oks, lines, strict=True))
    assert MlflowClient(server.url).search_registered_models() == []  # every claim released
