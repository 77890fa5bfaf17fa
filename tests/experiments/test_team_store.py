"""A team store for real: PostgreSQL (pgserver) behind `mlflow server` on a free local port; a
parallel sweep logs every run there, resumes from it, survives a server restart, and feeds the
report."""

import os
import subprocess
import sys
import time
from collections import Counter

import pytest
from mlflow import MlflowClient

from experiments.team_server import mlflow_server_command, start_postgres, wait_until_ready
from reports.build import build_report

SWEEP = ["-m", "dataset=wine,diabetes", "method=random_forest,gbt", "engine=inhouse,sklearn",
         "seed=0,1,2", "method.n_estimators=10"]  # 24 jobs


class Server:
    """PostgreSQL for the whole module, and an mlflow server that a test may restart."""

    def __init__(self, data, port: int):
        self.data = data
        self.database, self.backend_uri = start_postgres(data)
        self.port = port
        self.url = f"http://127.0.0.1:{self.port}"
        self.start()

    def start(self) -> None:
        command = mlflow_server_command(self.backend_uri, self.data / "artifacts", "127.0.0.1",
                                        self.port, [])  # fmt: skip
        self.process = subprocess.Popen(command, cwd=self.data, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)  # fmt: skip
        wait_until_ready(self.url, self.process)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=60)


@pytest.fixture(scope="module")
def server(tmp_path_factory, free_port):
    running = Server(tmp_path_factory.mktemp("team"), free_port())
    yield running
    running.stop()
    running.database.cleanup()


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
    server.stop()
    time.sleep(3)
    server.start()
    _, stderr = sweep.communicate(timeout=600)
    assert sweep.returncode == 0, stderr
    runs = job_runs(server.url, "restart")
    assert Counter(run.data.tags.get("status") for run in runs) == {"ok": 24}
    assert len({run.data.tags["run_key"] for run in runs}) == 24
