"""Fixtures: composed job configs, the command line, and throwaway MLflow stores (the repo's own
store is never touched)."""

import email.message
import os
import re
import socket
import subprocess
import sys
from importlib import resources
from io import BytesIO
from pathlib import Path
from urllib.error import URLError
from urllib.response import addinfourl

import mlflow
import pytest
import sklearn.datasets._openml as sklearn_openml
from hydra import compose, initialize_config_dir
from omegaconf import DictConfig

from experiments.configs import register_configs
from experiments.paths import CONF_DIR

register_configs()


@pytest.fixture(scope="session")
def free_port():
    """free_port() -> a TCP port of 127.0.0.1 that nothing listens on now."""

    def free_port() -> int:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            return probe.getsockname()[1]

    return free_port


@pytest.fixture(scope="session")
def store_uri(tmp_path_factory: pytest.TempPathFactory) -> str:
    """One sqlite store for the in-process tests; each test has its own experiment."""
    return f"sqlite:///{tmp_path_factory.mktemp('store') / 'mlflow.db'}"


@pytest.fixture
def compose_job(store_uri: str, request: pytest.FixtureRequest):
    """compose_job(*overrides) -> the job config, tracked in this test's own experiment (named
    after the test, parameters included)."""

    def compose_job(*overrides: str) -> DictConfig:
        experiment = re.sub(r"\W", "_", request.node.name)
        tracking = [f"mlflow.tracking_uri={store_uri}", f"mlflow.experiment_name={experiment}"]
        with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
            return compose("config", overrides=[*tracking, *overrides])

    return compose_job


def search_runs(tracking_uri: str, experiment_name: str) -> list[mlflow.entities.Run]:
    """The runs of the experiment but the sweeps' own parent runs (status=sweep)."""
    mlflow.set_tracking_uri(tracking_uri)
    runs = mlflow.search_runs(experiment_names=[experiment_name], output_format="list")
    return [run for run in runs if run.data.tags.get("status") != "sweep"]


@pytest.fixture
def runs_of():
    """runs_of(cfg) -> every run of the job config's experiment."""
    return lambda cfg: search_runs(cfg.mlflow.tracking_uri, cfg.mlflow.experiment_name)


@pytest.fixture
def cli(tmp_path: Path):
    """cli(*overrides) runs `python -m experiments.run` with MLFLOW_TRACKING_URI pointing at
    tmp_path/mlflow.db and Hydra's outputs under tmp_path; returns the completed process."""

    def cli(*overrides: str) -> subprocess.CompletedProcess:
        env = {**os.environ, "MLFLOW_TRACKING_URI": f"sqlite:///{tmp_path / 'mlflow.db'}"}
        env.pop("HYDRA_FULL_ERROR", None)
        command = [
            sys.executable,
            "-m",
            "experiments.run",
            *overrides,
            f"hydra.run.dir={tmp_path / 'outputs'}",
            f"hydra.sweep.dir={tmp_path / 'multirun'}",
        ]
        return subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True)

    return cli


@pytest.fixture
def cli_runs(tmp_path: Path):
    """cli_runs(experiment_name) -> every run that `cli` logged in that experiment."""
    return lambda name: search_runs(f"sqlite:///{tmp_path / 'mlflow.db'}", name)


RECORDED = Path(str(resources.files("sklearn.datasets.tests.data.openml")))
ROUTES = (  # OpenML URL path -> the recorded file's name (scikit-learn's abbreviations)
    (r"api/v1/json/data/features/(\d+)$", "api-v1-jdf-{}.json.gz"),
    (r"api/v1/json/data/qualities/(\d+)$", "api-v1-jdq-{}.json.gz"),
    (r"api/v1/json/data/(\d+)$", "api-v1-jd-{}.json.gz"),
    (r"data/v1/download/(\d+)/", "data-v1-dl-{}.arff.gz"),
)


def recorded_file(url: str) -> Path | None:
    """The recorded response to an OpenML URL, if scikit-learn ships one."""
    path = url.split("openml.org/", 1)[1]
    for pattern, name in ROUTES:
        match = re.match(pattern, path)
        if match:
            return next(RECORDED.glob(f"id_*/{name.format(match.group(1))}"), None)
    return None


@pytest.fixture
def recorded_openml(monkeypatch) -> list[str]:
    """fetch_openml's urlopen answers with the recorded gzipped responses (Content-Encoding:
    gzip, as openml.org answers) and is offline for anything else; returns the requested URLs."""
    requested = []

    def urlopen(request, *args, **kwargs):
        url = request.get_full_url()
        requested.append(url)
        file = recorded_file(url)
        if file is None:
            raise URLError(OSError(-2, "Name or service not known"))
        headers = email.message.Message()
        headers["Content-Encoding"] = "gzip"
        return addinfourl(BytesIO(file.read_bytes()), headers, url, 200)

    monkeypatch.setattr(sklearn_openml, "urlopen", urlopen)
    return requested
