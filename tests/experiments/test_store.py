"""One resolver of the store's URI: the sweeps and the reports read the same database."""

from pathlib import Path

import pytest

from experiments.paths import PROJECT_ROOT
from experiments.store.uri import sqlite_path, tracking_uri
from reports.build import build_report


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        ("sqlite:///mlflow.db", "relative"),
        ("sqlite:///runs/mlflow.db", "relative"),
        ("sqlite:////abs/dir/mlflow.db", Path("/abs/dir/mlflow.db")),
        ("sqlite:///my%20runs.db", "relative"),
        ("sqlite:///:memory:", None),
        ("sqlite://", None),
        ("http://127.0.0.1:5000", None),
        ("postgresql://mlflow:secret@db/mlflow", None),
        ("file:///tmp/mlruns", None),
    ],
)
def test_sqlite_path_reads_a_uri_as_sqlalchemy_does(uri, expected, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    if expected == "relative":
        expected = tmp_path / uri.removeprefix("sqlite:///").replace("%20", " ")
    assert sqlite_path(uri) == expected


def test_the_default_store_is_the_projects_unless_the_environment_names_one(monkeypatch):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    assert tracking_uri() == f"sqlite:///{PROJECT_ROOT / 'mlflow.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "sqlite:///mlflow.db")
    assert tracking_uri() == "sqlite:///mlflow.db"
    assert tracking_uri("http://127.0.0.1:5000") == "http://127.0.0.1:5000"


def test_a_relative_sqlite_uri_reaches_the_same_store_from_sweep_and_report(
    cli, tmp_path, monkeypatch
):
    """MLflow's own relative form, sqlite:///mlflow.db: the sweep wrote ./mlflow.db and the
    report looked for /mlflow.db ("existing: none (no such database)")."""
    result = cli(
        "dataset=wine",
        "engine=sklearn",
        "method.n_estimators=5",
        "mlflow.tracking_uri=sqlite:///mlflow.db",
        "mlflow.experiment_name=relative",
    )
    assert result.returncode == 0, result.stderr
    monkeypatch.chdir(tmp_path)  # the cli ran in tmp_path
    paths = build_report("sqlite:///mlflow.db", "relative", tmp_path / "report")
    assert tmp_path / "report" / "tables.md" in paths
    assert "| wine" in (tmp_path / "report" / "tables.md").read_text()
