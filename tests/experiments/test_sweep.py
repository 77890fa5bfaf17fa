"""Sweeps end to end on the command line, into a throwaway store."""

from collections import Counter

import pandas as pd
import pytest
from mlflow import MlflowClient

pytestmark = pytest.mark.slow  # each test runs sweeps in fresh processes


def test_a_failing_job_does_not_stop_the_sweep_but_fails_the_command(cli, cli_runs):
    result = cli(
        "-m",
        "dataset=friedman1",
        "dataset.n_samples=200",
        "engine=sklearn",
        "method.n_estimators=5",
        "method.min_samples_leaf=1,0,2",
        "mlflow.experiment_name=failing",
    )
    assert result.returncode != 0
    assert result.stderr.strip().splitlines()[-1] == "error: 1 of 3 jobs failed"
    runs = cli_runs("failing")
    assert Counter(run.data.tags["status"] for run in runs) == {"ok": 2, "failed": 1}
    [failed] = [run for run in runs if run.data.tags["status"] == "failed"]
    assert failed.data.params["method.min_samples_leaf"] == "0"
    assert failed.data.tags["error"].startswith(
        "InvalidParameterError: The 'min_samples_leaf' parameter of RandomForestRegressor"
    )


def test_a_single_failing_job_fails_the_command_with_its_cause_on_stderr(cli, cli_runs):
    result = cli("dataset=diabetes", "method.min_samples_leaf=0", "mlflow.experiment_name=one")
    assert result.returncode != 0
    assert result.stderr.strip().splitlines()[-1] == (
        "error: diabetes/random_forest/auto/inhouse seed=0 failed: ValueError: min_samples_leaf "
        "must be >= 1, got 0; its run holds the error tag and traceback.txt"
    )
    [run] = cli_runs("one")
    assert run.data.tags["status"] == "failed"


def test_a_data_error_of_a_single_job_is_refused_before_its_run(cli, cli_runs, tmp_path):
    """A file that cannot be read as stated (here: no such target column) stops the command
    with the cause as its last line, before any run is logged."""
    table = tmp_path / "table.csv"
    table.write_text("a,b\n1,2\n3,4\n")
    result = cli(
        "dataset=csv",
        f"dataset.path={table}",
        "dataset.target=y_true",
        "dataset.task=binary",
        "mlflow.experiment_name=no_target",
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1] == (
        f"error: no target column 'y_true' in dataset table ({table}); columns: a, b"
    )
    assert cli_runs("no_target") == []


def test_a_rerun_sweep_logs_no_job_twice_skipped_ones_included(cli, cli_runs):
    """Resume treats a skipped run of a run_key as done, as it does an ok one (a re-run of the
    default sweep with 2 workers once logged its 36 skipped jobs a second time)."""
    sweep = [
        "-m",
        "hydra/launcher=joblib",
        "hydra.launcher.n_jobs=2",
        "dataset=diabetes",
        "method=random_forest,adaboost",
        "engine=sklearn",
        "method.n_estimators=5",
        "seed=0,1",
        "mlflow.experiment_name=twice",
    ]
    first = cli(*sweep)
    assert first.returncode == 0
    again = cli(*sweep)
    assert again.returncode == 0
    assert again.stderr.strip().splitlines()[-1].endswith(
        ": 0 ok, 0 skipped, 0 failed, 4 resumed, 0 orphaned"
    )
    runs = cli_runs("twice")
    statuses = Counter(run.data.tags["status"] for run in runs)
    assert statuses == {"ok": 2, "skipped": 2}  # AdaBoost does not regress: skipped, once
    assert len({run.data.tags["run_key"] for run in runs}) == 4


def test_a_parallel_sweep_into_a_new_store_logs_every_job(cli, cli_runs, tmp_path):
    sweep = [
        "-m",
        "hydra/launcher=joblib",
        "hydra.launcher.n_jobs=2",
        "dataset=diabetes",
        "engine=sklearn,inhouse",
        "seed=0,1",
        "method.n_estimators=10",
        "mlflow.experiment_name=e2e",
    ]
    result = cli(*sweep)
    assert result.returncode == 0, result.stderr
    # the store and experiment were created once, before the two workers started
    assert result.stderr.count("Creating initial MLflow database tables") == 1
    runs = cli_runs("e2e")
    jobs = sorted(f"{run.data.tags['engine']}/{run.data.tags['seed']}" for run in runs)
    assert jobs == ["inhouse/0", "inhouse/1", "sklearn/0", "sklearn/1"]
    assert {run.data.tags["status"] for run in runs} == {"ok"}
    assert all(run.data.metrics["test_rmse"] > 0 for run in runs)
    # one parent run per sweep holds its counts; every job is its child, named readably
    [sweep_id] = {run.data.tags["sweep_id"] for run in runs}
    assert {run.data.tags["mlflow.parentRunId"] for run in runs} == {sweep_id}
    assert sorted(run.info.run_name for run in runs) == [
        f"diabetes/random_forest/auto/{engine} seed={seed}"
        for engine in ("inhouse", "sklearn") for seed in (0, 1)
    ]
    sweep = MlflowClient(f"sqlite:///{tmp_path / 'mlflow.db'}").get_run(sweep_id)
    assert sweep.data.tags["status"] == "sweep" and sweep.data.tags["launcher"] == "JoblibLauncher"
    assert sweep.data.metrics["jobs_ok"] == 4 and sweep.data.metrics["jobs_failed"] == 0
    assert sweep.info.status == "FINISHED"
    assert "sweep: 4 jobs in " in result.stderr
    assert ": 4 ok, 0 skipped, 0 failed, 0 resumed, 0 orphaned" in result.stderr
    # the data of each job is an MLflow dataset input, the same for every job
    digests = {run.inputs.dataset_inputs[0].dataset.digest for run in runs}
    assert len(digests) == 1
    assert {run.inputs.dataset_inputs[0].dataset.name for run in runs} == {"diabetes"}


def test_a_one_dataset_sweep_feeds_the_report(cli, cli_runs, tmp_path):
    """Sweep -> MLflow -> report: one row for the dataset, one column per (method, engine)."""
    from reports.build import build_report

    result = cli(
        "-m",
        "dataset=breast_cancer",
        "engine=inhouse,sklearn",
        "seed=0,1",
        "method.n_estimators=20",
        "mlflow.experiment_name=to_report",
    )
    assert result.returncode == 0, result.stderr
    runs = cli_runs("to_report")
    assert {run.data.tags["status"] for run in runs} == {"ok"} and len(runs) == 4
    build_report(f"sqlite:///{tmp_path / 'mlflow.db'}", "to_report", tmp_path / "report")
    table = (tmp_path / "report" / "tables.md").read_text()
    error_table = table.split("## test_error\n")[1].split("\n## ")[0]
    rows = [line for line in error_table.splitlines() if line.startswith("| breast_cancer")]
    assert len(rows) == 1
    assert "random_forest / inhouse" in table and "random_forest / sklearn" in table
    errors = [run.data.metrics["test_error"] for run in runs]
    assert all(0.0 <= error < 0.15 for error in errors)
    # the verdicts, a log-loss table, the failures section (none) and each table's legend
    verdicts = pd.read_csv(tmp_path / "report" / "verdicts.csv")
    assert set(verdicts["metric"]) == {"test_error", "test_logloss"}
    assert set(verdicts["verdict"]) <= {"best", "untested"}  # 2 seeds of a holdout: too few
    assert "## test_logloss\n" in table and "italic = untested" in table
    assert "## failures and reruns" in table


def test_the_report_selects_the_runs_of_one_sweep(cli, cli_runs, tmp_path):
    """Two sweeps into one experiment (seeds 0 and 1): --sweep latest reports the second only,
    --sweep with the first sweep's run id the first only, an unknown id names the sweeps."""
    from reports.__main__ import main

    for seed in (0, 1):
        result = cli("-m", "dataset=breast_cancer", "engine=inhouse,sklearn", f"seed={seed}",
                     "method.n_estimators=10", "mlflow.experiment_name=two_sweeps")
        assert result.returncode == 0, result.stderr
    runs = cli_runs("two_sweeps")
    first_sweep = {run.data.tags["sweep_id"] for run in runs if run.data.tags["seed"] == "0"}
    assert len(first_sweep) == 1 and len(runs) == 4
    uri = ["--tracking-uri", f"sqlite:///{tmp_path / 'mlflow.db'}", "--experiment", "two_sweeps"]
    for sweep, seed in (("latest", 1), (first_sweep.pop(), 0)):
        out = tmp_path / f"report_{seed}"
        assert main([*uri, "--out", str(out), "--sweep", sweep]) == 0
        results = pd.read_csv(out / "results.csv")
        assert set(results["seed"]) == {seed} and len(results) == 2
    assert main([*uri, "--out", str(tmp_path / "none"), "--sweep", "0123abc"]) == 1
