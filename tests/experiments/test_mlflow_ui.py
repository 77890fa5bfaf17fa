"""`make ui` opens at the experiment's runs, not at MLflow 3's GenAI overview: the URL it prints
names the experiment the store holds, and the UI it starts serves that experiment there."""

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request

import pytest
from mlflow import MlflowClient

from experiments.mlflow_ui import runs_view_url


def test_the_url_is_the_runs_view_of_the_experiment(tmp_path):
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    assert runs_view_url(uri, "default", 5000) == "http://127.0.0.1:5000/#/experiments"
    experiment_id = MlflowClient(uri).create_experiment("default")
    assert runs_view_url(uri, "default", 5001) == (
        f"http://127.0.0.1:5001/#/experiments/{experiment_id}?workflowType=machine_learning")


@pytest.mark.slow
def test_make_ui_prints_the_url_of_an_experiment_it_serves(tmp_path, free_port):
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    experiment_id = MlflowClient(uri).create_experiment("study")
    port = free_port()
    ui = subprocess.Popen([sys.executable, "-m", "experiments.mlflow_ui", "--experiment", "study",
                           "--port", str(port)], stdout=subprocess.PIPE, text=True,
                          env={**os.environ, "MLFLOW_TRACKING_URI": uri},
                          start_new_session=True)  # fmt: skip
    try:
        line = ui.stdout.readline()
        assert line.strip().endswith(f"/#/experiments/{experiment_id}"
                                     "?workflowType=machine_learning")
        api = (f"http://127.0.0.1:{port}/ajax-api/2.0/mlflow/experiments/get?"
               f"experiment_id={experiment_id}")
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(api, timeout=2) as answer:
                    assert json.load(answer)["experiment"]["name"] == "study"
                    break
            except OSError:
                assert time.monotonic() < deadline and ui.poll() is None
                time.sleep(0.5)
    finally:
        os.killpg(ui.pid, signal.SIGTERM)
        ui.wait(timeout=60)
