"""A tracking URI with credentials is refused in one line before anything is written: MLflow
would store it in every run's params and config.yaml, Hydra in its output files, and both
print it."""

import subprocess
import sys

import pytest

from experiments.run import exit_if_credentials_in_uri
from experiments.store.uri import CredentialsInURI, refuse_credentials
from reports.__main__ import main as report_main

SECRET = "pl4nted-s3cret"


@pytest.mark.parametrize("uri", [f"http://alice:{SECRET}@127.0.0.1:5999",
                                 f"https://{SECRET}@mlflow.example.org/prefix",
                                 f"postgresql://lab:{SECRET}@db:5432/mlflow"])  # fmt: skip
def test_a_uri_with_credentials_is_refused_without_repeating_them(uri):
    with pytest.raises(CredentialsInURI) as refused:
        refuse_credentials(uri)
    assert SECRET not in str(refused.value)
    assert "MLFLOW_TRACKING_USERNAME" in str(refused.value)


@pytest.mark.parametrize("uri", ["http://127.0.0.1:5000", "sqlite:////tmp/a:b@c/mlflow.db",
                                 "file:///tmp/mlruns", "databricks"])  # fmt: skip
def test_a_uri_without_credentials_passes(uri):
    refuse_credentials(uri)


def test_the_command_line_refuses_it_before_hydra_writes_a_file(tmp_path):
    uri = f"http://alice:{SECRET}@127.0.0.1:5999"
    command = [sys.executable, "-m", "experiments.run", "-m", "dataset=wine",
               f"mlflow.tracking_uri={uri}"]  # fmt: skip
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.startswith("error: the tracking URI holds credentials;")
    assert len(done.stderr.strip().splitlines()) == 1
    assert SECRET not in done.stdout + done.stderr
    assert list(tmp_path.iterdir()) == []  # no multirun/, outputs/ or store


def test_the_environments_uri_is_refused_as_well(monkeypatch, capsys):
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"http://alice:{SECRET}@127.0.0.1:5999")
    with pytest.raises(SystemExit) as exited:
        exit_if_credentials_in_uri(["dataset=wine"])
    err = capsys.readouterr().err
    assert exited.value.code == 2 and err.startswith("error: the tracking URI holds credentials;")
    assert SECRET not in err


def test_the_report_refuses_it_in_one_line(tmp_path, capsys):
    code = report_main(["--tracking-uri", f"http://alice:{SECRET}@127.0.0.1:5999",
                        "--out", str(tmp_path)])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 1 and err.startswith("error: the tracking URI holds credentials;")
    assert SECRET not in err
