"""`make ui` opens at the experiment's runs, not at MLflow 3's GenAI overview: the URL it prints
names the experiment the store holds, the UI it starts serves that experiment there, and a real
browser (headless Chromium) shows the jobs of a sweep in the lab's columns at that URL."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from html.parser import HTMLParser
from typing import NamedTuple

import numpy as np
import pytest
from mlflow import MlflowClient
from PIL import Image

from experiments.mlflow_ui import VIEW, runs_view_url, shared_runs_view

EXPERIMENT = "study"
SWEEP = ("dataset=iris,diabetes", "method=random_forest", "method.n_estimators=5",
         "engine=sklearn", "seed=3")  # fmt: skip
BROWSERS = ("chromium", "chromium-headless-shell", "chrome-headless-shell", "google-chrome")
CHROMIUM = next(filter(None, map(shutil.which, BROWSERS)), None)
WINDOW = (1920, 1080)


def test_the_url_is_the_runs_view_of_the_experiment(tmp_path):
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    assert shared_runs_view(uri, "default") is None
    assert runs_view_url(None, 5000) == "http://127.0.0.1:5000/#/experiments"
    client = MlflowClient(uri)
    experiment_id = client.create_experiment("default")
    assert shared_runs_view(uri, "default") == experiment_id
    assert runs_view_url(experiment_id, 5001) == (
        f"http://127.0.0.1:5001/#/experiments/{experiment_id}/runs?viewStateShareKey=lab"
        "&workflowType=machine_learning")
    view = json.loads(client.get_experiment(experiment_id).tags["mlflow.sharedViewState.lab"])
    assert view["selectedColumns"] == ["tags.`dataset`", "tags.`method`", "tags.`engine`",
                                       "tags.`seed`", "metrics.`test_error`", "metrics.`test_rmse`"]
    deleted = client.create_experiment("deleted")
    client.delete_experiment(deleted)
    assert shared_runs_view(uri, "deleted") is None
    assert "mlflow.sharedViewState.lab" not in client.get_experiment(deleted).tags


class LabUI(NamedTuple):
    line: str  # what `make ui` printed
    uri: str
    experiment_id: str
    port: int


@pytest.fixture(scope="module")
def lab_ui(tmp_path_factory, free_port):
    """`make ui`'s command on a store that holds a sweep of two jobs (iris, diabetes) in the
    experiment 'study', once its API answers; the UI starts while the sweep runs."""
    tmp = tmp_path_factory.mktemp("ui")
    uri = f"sqlite:///{tmp / 'mlflow.db'}"
    experiment_id = MlflowClient(uri).create_experiment(EXPERIMENT)  # once, before both start
    env = {**os.environ, "MLFLOW_TRACKING_URI": uri}
    port = free_port()
    ui = subprocess.Popen([sys.executable, "-m", "experiments.mlflow_ui", "--experiment",
                           EXPERIMENT, "--port", str(port)], stdout=subprocess.PIPE, text=True,
                          env=env, start_new_session=True)  # fmt: skip
    try:
        line = ui.stdout.readline()
        sweep = subprocess.run([sys.executable, "-m", "experiments.run", "-m", *SWEEP,
                                f"mlflow.experiment_name={EXPERIMENT}",
                                f"hydra.sweep.dir={tmp / 'multirun'}"],
                               cwd=tmp, env=env, capture_output=True, text=True)  # fmt: skip
        assert sweep.returncode == 0, sweep.stderr
        health = f"http://127.0.0.1:{port}/health"
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(health, timeout=2):
                    break
            except OSError:
                assert time.monotonic() < deadline and ui.poll() is None
                time.sleep(0.5)
        yield LabUI(line, uri, experiment_id, port)
    finally:
        os.killpg(ui.pid, signal.SIGTERM)
        ui.wait(timeout=60)


@pytest.mark.slow
def test_make_ui_prints_the_url_of_an_experiment_it_serves(lab_ui):
    assert lab_ui.line.strip().endswith(f"/#/experiments/{lab_ui.experiment_id}/runs?"
                                        "viewStateShareKey=lab&workflowType=machine_learning")
    api = (f"http://127.0.0.1:{lab_ui.port}/ajax-api/2.0/mlflow/experiments/get?"
           f"experiment_id={lab_ui.experiment_id}")
    with urllib.request.urlopen(api, timeout=10) as answer:
        experiment = json.load(answer)["experiment"]
    assert experiment["name"] == EXPERIMENT
    tags = {tag["key"]: tag["value"] for tag in experiment["tags"]}
    assert json.loads(tags["mlflow.sharedViewState.lab"]) == VIEW


class TextOf(HTMLParser):
    """The text nodes of an HTML document, stripped, but those of scripts and styles."""

    def __init__(self, html: str):
        super().__init__()
        self.texts: list[str] = []
        self.hidden = 0
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        self.hidden += tag in ("script", "style")

    def handle_endtag(self, tag):
        self.hidden -= tag in ("script", "style")

    def handle_data(self, data):
        if not self.hidden and data.strip():
            self.texts.append(data.strip())


def chromium(url: str, output: str, profile) -> subprocess.CompletedProcess:
    """Headless Chromium on `url` with a fresh profile; `output`: --dump-dom (to stdout) or
    --screenshot=FILE (one per run: both at once never return). Virtual time stands still while
    the page's requests are pending, so its budget is the page's own timers, not the server's
    speed. No sandbox: it refuses to start as root otherwise, and it opens only the lab's own
    page on 127.0.0.1."""
    command = [CHROMIUM, "--headless", "--no-sandbox", f"--user-data-dir={profile}",
               "--window-size={},{}".format(*WINDOW), "--hide-scrollbars",
               "--virtual-time-budget=5000", output, url]  # fmt: skip
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason=f"no headless Chromium ({', '.join(BROWSERS)}) on "
                    "PATH; .ci/run installs Debian's chromium-headless-shell as root with apt-get")
def test_a_browser_at_the_url_shows_the_jobs_in_the_lab_columns(lab_ui, tmp_path):
    url = lab_ui.line.split(": ", 1)[1].strip()
    dom = chromium(url, "--dump-dom", tmp_path / "dom").stdout
    texts = TextOf(dom).texts
    assert f"Runs - Experiment {lab_ui.experiment_id} - MLflow" in texts  # not "Overview - ..."
    assert "Token Usage" not in texts  # a panel of the GenAI overview
    assert {"dataset", "method", "engine", "seed", "test_error", "test_rmse"} <= set(texts)
    jobs = MlflowClient(lab_ui.uri).search_runs([lab_ui.experiment_id], "tags.status = 'ok'")
    assert len(jobs) == 2
    for job in jobs:
        tags, metrics = job.data.tags, job.data.metrics
        assert job.info.run_name in texts and f"Group: {tags['dataset']}" in texts
        row = [*(str(metrics.get(metric, "-")) for metric in ("test_error", "test_rmse")),
               *(tags[tag] for tag in ("dataset", "method", "engine", "seed"))]  # fmt: skip
        assert any(texts[start : start + len(row)] == row for start in range(len(texts))), row
    chromium(url, f"--screenshot={tmp_path / 'runs.png'}", tmp_path / "screenshot")
    with Image.open(tmp_path / "runs.png") as png:
        assert png.format == "PNG" and png.size == WINDOW
        pixels = np.asarray(png.convert("RGB")).reshape(-1, 3)
    assert len(np.unique(pixels, axis=0)) > 100  # text, icons and colours, not a blank page
