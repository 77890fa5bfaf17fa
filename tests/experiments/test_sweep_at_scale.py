"""Sweeps that lose nothing: parallel launchers store every run and metric the sequential
sweep stores, and an interrupted sweep resumes to exactly one ok run per job."""

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from mlflow import MlflowClient

# 24 quick jobs: 4 datasets x 2 engines x 3 seeds of a 5-round GBT with a curve every 2 rounds
SWEEP_24 = [
    "-m",
    "dataset=iris,wine,breast_cancer,diabetes",
    "engine=inhouse,sklearn",
    "seed=0,1,2",
    "method=gbt",
    "method.n_estimators=5",
    "eval.curve_every=2",
]
CURVE_STEPS = [1, 2, 4, 5]
JOB_METRICS = {"fit_seconds", "predict_seconds", "peak_rss_mb", "n_trees", "n_leaves"}


def logged_jobs(cli_runs, experiment: str) -> dict[str, dict[str, float]]:
    """{run_key: metrics} of the experiment's runs, each of which must be ok."""
    runs = cli_runs(experiment)
    assert Counter(run.data.tags["status"] for run in runs) == {"ok": len(runs)}
    assert len({run.data.tags["run_key"] for run in runs}) == len(runs)
    return {run.data.tags["run_key"]: run.data.metrics for run in runs}


def assert_complete(cli_runs, tmp_path: Path, experiment: str) -> None:
    """Every run holds its test metric, its job metrics and its whole learning curve."""
    client = MlflowClient(f"sqlite:///{tmp_path / 'mlflow.db'}")
    for run in cli_runs(experiment):
        metrics = run.data.metrics
        primary = "test_rmse" if run.data.tags["task"] == "regression" else "test_error"
        assert {primary, *JOB_METRICS} <= set(metrics), run.data.tags
        history = client.get_metric_history(run.info.run_id, f"curve_{primary}")
        assert sorted(point.step for point in history) == CURVE_STEPS


def assert_same_runs(cli, cli_runs, sweep: list[str], launcher: list[str], n_jobs: int) -> None:
    """The sweep run by the launcher stores the runs the sequential sweep stores: the same
    run keys, metric names, leaf counts and test metrics."""
    for experiment, overrides in (("sequential", []), ("launched", launcher)):
        result = cli(*sweep, *overrides, f"mlflow.experiment_name={experiment}")
        assert result.returncode == 0, result.stderr
    expected = logged_jobs(cli_runs, "sequential")
    stored = logged_jobs(cli_runs, "launched")
    assert len(stored) == n_jobs and stored.keys() == expected.keys()
    for key, metrics in stored.items():
        assert metrics.keys() == expected[key].keys()
        primary = "test_rmse" if "test_rmse" in metrics else "test_error"
        for name in (primary, "n_leaves"):
            assert metrics[name] == expected[key][name]


@pytest.mark.slow
def test_a_joblib_sweep_of_24_jobs_stores_what_the_sequential_sweep_stores(
    cli, cli_runs, tmp_path
):
    launcher = ["hydra/launcher=joblib", "hydra.launcher.n_jobs=2"]
    assert_same_runs(cli, cli_runs, SWEEP_24, launcher, n_jobs=24)
    assert_complete(cli_runs, tmp_path, "launched")


@pytest.mark.slow
def test_a_submitit_local_sweep_stores_what_the_sequential_sweep_stores(cli, cli_runs):
    sweep = ["-m", "dataset=wine,diabetes", "engine=inhouse,sklearn", "method.n_estimators=5"]
    launcher = ["hydra/launcher=submitit_local", "hydra.sweeper.max_batch_size=2"]
    assert_same_runs(cli, cli_runs, sweep, launcher, n_jobs=4)


# `python -m experiments.run` whose fourth evaluation starts with a real SIGINT (Ctrl-C) to
# the process: the interrupt lands inside a job on every machine, however fast its jobs are
INTERRUPT_FOURTH_JOB = """
import os, runpy, signal
import experiments.evaluation as evaluation

# Ctrl-C as in a terminal, also when the tests were started with SIGINT ignored (a shell's
# background job), which the child inherits
signal.signal(signal.SIGINT, signal.default_int_handler)

real_evaluate, calls = evaluation.evaluate, []


def evaluate(*args):
    calls.append(args)
    if len(calls) == 4:
        os.kill(os.getpid(), signal.SIGINT)
    return real_evaluate(*args)


evaluation.evaluate = evaluate
runpy.run_module("experiments.run", run_name="__main__", alter_sys=True)
"""


@pytest.mark.slow
def test_an_interrupted_sweep_resumes_to_exactly_one_ok_run_per_job(cli, cli_runs, tmp_path):
    """SIGINT (Ctrl-C) while the fourth job runs: that job's run is failed with error
    KeyboardInterrupt and MLflow status KILLED, and the sweep stops; resuming runs it and the
    rest, so that every job ends with exactly one ok run."""
    sweep = [
        "-m",
        "dataset=breast_cancer",
        "method.n_estimators=20",
        "seed=0,1,2,3,4,5,6,7",
        "mlflow.experiment_name=interrupted",
    ]
    env = {**os.environ, "MLFLOW_TRACKING_URI": f"sqlite:///{tmp_path / 'mlflow.db'}"}
    command = [
        sys.executable,
        "-c",
        INTERRUPT_FOURTH_JOB,
        *sweep,
        f"hydra.sweep.dir={tmp_path / 'multirun'}",
    ]
    first = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert first.returncode != 0, first.stderr
    interrupted = cli_runs("interrupted")
    assert Counter(run.data.tags.get("status") for run in interrupted) == {"ok": 3, "failed": 1}
    [cut] = [run for run in interrupted if run.data.tags["status"] == "failed"]
    assert cut.data.tags["error"].startswith("KeyboardInterrupt")
    assert cut.info.status == "KILLED"

    resumed = cli(*sweep)
    assert resumed.returncode == 0, resumed.stderr
    runs = cli_runs("interrupted")
    ok = Counter(run.data.params["seed"] for run in runs if run.data.tags["status"] == "ok")
    assert ok == {str(seed): 1 for seed in range(8)}
    assert [run.data.tags["status"] for run in runs if run.data.tags["status"] != "ok"] == [
        "failed"
    ]


def test_the_slurm_launcher_composes_with_the_lab(cli):
    """No cluster here: check that the submitit plugin takes the lab's sweep and settings."""
    result = cli(
        "--cfg",
        "hydra",
        "+sweep=default",
        "hydra/launcher=submitit_slurm",
        "hydra.launcher.partition=cpu",
        "hydra.launcher.cpus_per_task=2",
    )
    assert result.returncode == 0, result.stderr
    assert "_target_: hydra_plugins.hydra_submitit_launcher.submitit_launcher.SlurmLauncher" in (
        result.stdout
    )
    assert "partition: cpu" in result.stdout
