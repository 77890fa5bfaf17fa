"""A sweep through Hydra's Ray launcher on a Ray cluster the test starts (`ray start --head`)
stores the runs of the sequential sweep: the same run keys, statuses and scores, every job a
child of the sweep's run, each run in a Ray worker process; a second sweep resumes them all."""

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from mlflow import MlflowClient

RAY = str(Path(sys.executable).parent / "ray")
SWEEP = ["-m", "dataset=wine,diabetes", "method=gbt,adaboost", "engine=inhouse,xgboost",
         "method.n_estimators=10", "seed=0"]  # 8 jobs: AdaBoost on xgboost and regression skip
SCORES = ("test_error", "test_rmse", "test_logloss", "n_trees", "n_leaves")


@pytest.fixture(scope="module")
def ray_address(free_port):
    """A one-node Ray cluster with 2 CPUs; its temporary directory short, as Ray's sockets need
    paths under 108 characters."""
    temp = tempfile.mkdtemp(prefix="ray", dir="/tmp")
    port = free_port()
    subprocess.run([RAY, "start", "--head", f"--port={port}", "--num-cpus=2",
                    "--include-dashboard=false", "--disable-usage-stats", f"--temp-dir={temp}"],
                   check=True, capture_output=True, timeout=180)  # fmt: skip
    yield f"127.0.0.1:{port}"
    subprocess.run([RAY, "stop", "--force"], capture_output=True, timeout=180)
    shutil.rmtree(temp, ignore_errors=True)


def counts(sweep: subprocess.CompletedProcess) -> str:
    """The job counts of the sweep's summary line."""
    return sweep.stderr.strip().splitlines()[-1].split(" s: ")[1]


def by_key(runs: list) -> dict:
    return {run.data.tags["run_key"]: run for run in runs}


@pytest.mark.slow
def test_a_sweep_on_ray_stores_the_runs_of_the_sequential_sweep(cli, cli_runs, ray_address,
                                                                tmp_path):
    sequential = cli(*SWEEP, "mlflow.experiment_name=sequential")
    assert sequential.returncode == 0, sequential.stderr
    on_ray = [*SWEEP, "hydra/launcher=ray", f"hydra.launcher.ray.init.address={ray_address}",
              "mlflow.experiment_name=ray"]  # fmt: skip
    first = cli(*on_ray)
    assert first.returncode == 0, first.stderr
    assert counts(first) == counts(sequential) == "5 ok, 3 skipped, 0 failed, 0 resumed, 0 orphaned"
    expected, stored = by_key(cli_runs("sequential")), by_key(cli_runs("ray"))
    assert stored.keys() == expected.keys() and len(stored) == 8
    for key, run in stored.items():
        reference = expected[key]
        assert run.info.run_name == reference.info.run_name
        assert run.data.tags["status"] == reference.data.tags["status"]
        assert run.data.tags.get("skip_reason") == reference.data.tags.get("skip_reason")
        scores = {name: value for name, value in run.data.metrics.items() if name in SCORES}
        assert scores == {name: reference.data.metrics[name] for name in scores}
    assert {run.data.tags["status"] for run in stored.values()} == {"ok", "skipped"}
    assert "Ray Launcher is launching 8 jobs" in first.stdout
    # the store and the parent run reach Ray's workers only through the forwarded environment
    [sweep] = MlflowClient(f"sqlite:///{tmp_path / 'mlflow.db'}").search_runs(
        [stored[next(iter(stored))].info.experiment_id], "tags.status = 'sweep'")
    assert sweep.data.tags["launcher"] == "RayLauncher"
    assert {run.data.tags["mlflow.parentRunId"] for run in stored.values()} == {sweep.info.run_id}
    assert {run.data.tags["sweep_id"] for run in stored.values()} == {sweep.info.run_id}

    again = cli(*on_ray)
    assert again.returncode == 0, again.stderr
    assert counts(again) == "0 ok, 0 skipped, 0 failed, 8 resumed, 0 orphaned"
    assert len(cli_runs("ray")) == 8
