"""Bias-variance and diversity tables, the ESL Figure 10.2 and margin figures, and the layout of
the critical-difference diagram, from synthetic stores checked by hand and from real jobs."""

import time

import numpy as np
import pandas as pd
import pytest
from hydra import compose, initialize_config_dir
from matplotlib.text import Text
from mlflow import MlflowClient
from mlflow.entities import Metric

from experiments.configs import register_configs
from experiments.paths import CONF_DIR
from experiments.run import run_job
from reports.analyses.margins import margin_cdf
from reports.build import build_report
from reports.esl import esl_figure
from reports.figures import cd_diagram
from reports.stats import FriedmanResult

register_configs()

# bv_* per (dataset, method, seed): loss, bias, variance[, unbiased, biased]
BIAS_VARIANCE = {
    ("cls", "bagging", 0): (0.12, 0.10, 0.02, 0.04, 0.02),
    ("cls", "bagging", 1): (0.16, 0.12, 0.04, 0.06, 0.02),
    ("cls", "random_forest", 0): (0.10, 0.09, 0.01, 0.03, 0.02),
    ("cls", "random_forest", 1): (0.10, 0.09, 0.01, 0.03, 0.02),
    ("reg", "large_tree", 0): (9.0, 4.0, 5.0),
    ("reg", "large_tree", 1): (9.0, 4.0, 5.0),
    ("reg", "random_forest", 0): (4.4, 3.8, 0.6),
    ("reg", "random_forest", 1): (4.6, 4.0, 0.6),
}
BV_NAMES = ["bv_loss", "bv_bias", "bv_variance", "bv_variance_unbiased", "bv_variance_biased"]
DIVERSITY = {0: {"div_disagreement": 0.1, "div_q": 0.8, "div_strength": 0.5},
             1: {"div_disagreement": 0.2, "div_q": 0.6, "div_strength": 0.7}}  # fmt: skip
ESL_ERRORS = {"stump": (0.46, 0.44), "large_tree": (0.25, 0.23)}  # per seed, both engines
ADABOOST_CURVE = {0: [(1, 0.46), (10, 0.30), (20, 0.20)], 1: [(1, 0.44), (10, 0.26), (20, 0.16)]}


def log_run(client, experiment, tags, metrics, margins=None):
    run = client.create_run(experiment, tags={"loss": "auto", "status": "ok", **tags})
    now = int(time.time() * 1000)
    points = [Metric(name, value, now, step) for name, value, step in metrics]
    client.log_batch(run.info.run_id, metrics=points)
    if margins is not None:
        client.log_text(run.info.run_id, margins.to_csv(index=False), "margins.csv")
    client.set_terminated(run.info.run_id)


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> str:
    root = tmp_path_factory.mktemp("analyses_store")
    uri = f"sqlite:///{root}/mlflow.db"
    client = MlflowClient(tracking_uri=uri)
    experiment = client.create_experiment("analyses", artifact_location=str(root / "artifacts"))
    for (dataset, method, seed), values in BIAS_VARIANCE.items():
        task = "binary" if dataset == "cls" else "regression"
        primary = "test_error" if task == "binary" else "test_rmse"
        metrics = [(primary, values[0], 0), *zip(BV_NAMES, values, [0] * 5, strict=False)]
        if (dataset, method) == ("cls", "random_forest"):
            metrics += [(name, value, 0) for name, value in DIVERSITY[seed].items()]
        tags = {"dataset": dataset, "method": method, "engine": "inhouse", "seed": str(seed),
                "task": task, "run_key": f"{dataset}-{method}-{seed}"}  # fmt: skip
        log_run(client, experiment, tags, metrics)
    for engine in ("inhouse", "sklearn"):
        for seed in (0, 1):
            tags = {"dataset": "hastie_10_2", "engine": engine, "seed": str(seed),
                    "task": "binary"}  # fmt: skip
            for method, errors in ESL_ERRORS.items():
                margins = pd.DataFrame({"rounds": [1, 1], "margin": [1.0, -1.0]})
                log_run(client, experiment, {**tags, "method": method,
                        "run_key": f"{method}-{engine}-{seed}"},  # fmt: skip
                        [("test_error", errors[seed], 0)],
                        margins if method == "stump" else None)  # fmt: skip
            curve = ADABOOST_CURVE[seed]
            margins = pd.DataFrame({"rounds": [2, 2, 20, 20], "margin": [-0.2, 0.4, 0.1, 0.3]})
            metrics = [("test_error", curve[-1][1], 0),
                       *(("curve_test_error", v, step) for step, v in curve)]  # fmt: skip
            log_run(client, experiment, {**tags, "method": "adaboost_400",
                    "run_key": f"ada-{engine}-{seed}"}, metrics, margins)  # fmt: skip
    return uri


@pytest.fixture(scope="module")
def report(store, tmp_path_factory):
    out = tmp_path_factory.mktemp("analyses_out")
    return out, build_report(store, "analyses", out)



def test_bias_variance_tables_by_hand(report, table_rows):
    markdown = (report[0] / "tables.md").read_text()
    rows = table_rows(markdown, "bias-variance: cls")
    assert rows["method / engine"] == [
        "loss", "bias", "variance", "unbiased var.", "biased var."
    ]  # fmt: skip
    # bagging: means 0.14, 0.11, 0.03, 0.05, 0.02; stds 0.04/sqrt 2 = 0.028, 0.02/sqrt 2 = 0.014
    assert rows["bagging / inhouse"] == [
        "0.140 ± 0.028", "0.110 ± 0.014", "0.030 ± 0.014", "0.050 ± 0.014", "**0.020 ± 0.000**"
    ]  # fmt: skip
    assert rows["random_forest / inhouse"] == [
        "**0.100 ± 0.000**", "**0.090 ± 0.000**", "**0.010 ± 0.000**", "**0.030 ± 0.000**",
        "**0.020 ± 0.000**",
    ]  # fmt: skip
    regression = table_rows(markdown, "bias-variance: reg")
    assert regression["method / engine"] == ["loss", "bias^2", "variance"]
    assert regression["large_tree / inhouse"] == ["9.00 ± 0.00", "4.00 ± 0.00", "5.00 ± 0.00"]
    assert regression["random_forest / inhouse"][0] == "**4.50 ± 0.14**"
    assert "0-1 loss (Domingos 2000)" in markdown.split("## bias-variance: cls")[1][:800]
    assert "includes the noise" in markdown.split("## bias-variance: reg")[1][:800]
    assert r"\label{tab:bias-variance-cls}" in (report[0] / "tables.tex").read_text()


def test_diversity_table_by_hand(report, table_rows):
    rows = table_rows((report[0] / "tables.md").read_text(), "diversity: cls")
    assert rows["method / engine"] == ["disagreement", "Q", "strength s"]
    assert rows["random_forest / inhouse"] == ["0.150 ± 0.071", "0.700 ± 0.141", "0.600 ± 0.141"]
    assert list(rows) == ["method / engine", "random_forest / inhouse"]


def test_esl_and_margin_figures_are_written_and_logged(store, report):
    out, paths = report
    names = {p.name for p in paths if p.parent.name == "figures"}
    assert {"esl_fig10_2_hastie_10_2.png", "esl_fig10_2_hastie_10_2.pdf"} <= names
    assert {"margins_adaboost_400.png", "margins_adaboost_400.pdf"} <= names
    assert not any(name.startswith("margins_stump") for name in names)  # one round only
    client = MlflowClient(tracking_uri=store)
    [experiment] = [e for e in client.search_experiments() if e.name == "analyses"]
    [run] = client.search_runs([experiment.experiment_id], "tags.status = 'report'")
    logged = {a.path for a in client.list_artifacts(run.info.run_id, "figures")}
    assert "figures/esl_fig10_2_hastie_10_2.png" in logged


def test_esl_figure_draws_seed_means_per_engine_and_the_books_values():
    curves = pd.DataFrame(
        [("hastie_10_2", "adaboost_400", engine, seed, step, value)
         for engine in ("inhouse", "sklearn") for seed, curve in ADABOOST_CURVE.items()
         for step, value in curve],  # fmt: skip
        columns=["dataset", "method", "engine", "seed", "rounds", "value"],
    )
    runs = pd.DataFrame(
        [("hastie_10_2", method, engine, errors[seed])
         for method, errors in ESL_ERRORS.items() for engine in ("inhouse", "sklearn")
         for seed in (0, 1)],  # fmt: skip
        columns=["dataset", "method", "engine", "test_error"],
    )
    ax = esl_figure(curves, runs, "hastie_10_2").axes[0]
    lines = {line.get_label(): line for line in ax.get_lines()}
    boosted = lines["AdaBoost, inhouse (last 18.0%)"]
    np.testing.assert_allclose(boosted.get_ydata(), [0.45, 0.28, 0.18])
    assert boosted.get_linestyle() == "-"
    assert lines["AdaBoost, sklearn (last 18.0%)"].get_linestyle() == "--"
    levels = sorted(round(c.get_segments()[0][0][1], 6) for c in ax.collections)
    assert levels == [0.24, 0.24, 0.45, 0.45]  # tree and stump means, per engine
    book = sorted(round(float(line.get_ydata()[0]), 3) for line in ax.get_lines()
                  if line.get_marker() == "<")  # fmt: skip
    assert book == [0.058, 0.247, 0.458]
    assert ax.get_xlabel() and ax.get_ylabel()


def test_margin_cdf_by_hand():
    x, cdf = margin_cdf([0.5, -0.5, 0.0, 0.5])
    assert x.tolist() == [-0.5, 0.0, 0.5, 0.5]
    assert cdf.tolist() == [0.25, 0.5, 0.75, 1.0]


def cd_result(k: int) -> FriedmanResult:
    pairs = [(f"method_{i}", "inhouse" if i % 2 else "sklearn") for i in range(k)]
    ranks = pd.Series(np.linspace(1.5, k - 0.5, k), index=pd.MultiIndex.from_tuples(pairs))
    return FriedmanResult("test_error", 10, ranks, 30.0, 0.001, 5.0, 2.0)


def test_cd_labels_neither_overlap_nor_cross_the_rank_axis():
    heights = {}
    for k in (4, 12):
        figure = cd_diagram(cd_result(k))
        figure.canvas.draw()
        ax = figure.axes[0]
        renderer = figure.canvas.get_renderer()
        labels = [t for t in ax.findobj(Text) if " / " in t.get_text()]
        assert len(labels) == k
        boxes = [t.get_window_extent(renderer) for t in labels]
        assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1 :])
        first, last = ax.transData.transform([(1, 0), (k, 0)])[:, 0]
        assert all(box.x1 < first or box.x0 > last for box in boxes)
        heights[k] = figure.get_figheight()
    assert heights[12] > heights[4]


@pytest.fixture(scope="module")
def job_store(tmp_path_factory) -> str:
    """Real jobs: a bias-variance job, a bagging job (diversity), an AdaBoost job (margins)."""
    uri = f"sqlite:///{tmp_path_factory.mktemp('jobs_store') / 'mlflow.db'}"
    jobs = [
        ["dataset=breast_cancer", "method=bagging", "method.n_estimators=3",
         "eval.kind=bias_variance", "eval.n_bootstrap=3"],
        ["dataset=iris", "method=bagging", "method.n_estimators=5"],
        ["dataset=iris", "method=adaboost", "method.n_estimators=10"],
    ]  # fmt: skip
    tracking = [f"mlflow.tracking_uri={uri}", "mlflow.experiment_name=jobs"]
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        for overrides in jobs:
            assert run_job(compose("config", overrides=[*tracking, *overrides])) == "ok"
    return uri


@pytest.mark.slow
def test_a_report_of_real_jobs_shows_their_logged_analyses(job_store, tmp_path, table_rows):
    paths = build_report(job_store, "jobs", tmp_path)
    runs = pd.read_csv(tmp_path / "results.csv").set_index(["dataset", "method"])
    markdown = (tmp_path / "tables.md").read_text()
    bias_variance = table_rows(markdown, "bias-variance: breast_cancer")["bagging / inhouse"]
    job = runs.loc[("breast_cancer", "bagging")]
    shown = [float(cell.strip("*")) for cell in bias_variance]  # one run: no std
    assert shown == pytest.approx([job[m] for m in BV_NAMES], abs=5e-4)
    assert job["bv_bias"] + job["bv_variance"] == pytest.approx(job["bv_loss"])
    diversity = table_rows(markdown, "diversity: iris")
    assert diversity["method / engine"][0] == "member error"
    member_error = runs.loc[("iris", "bagging"), "div_member_error"]
    assert diversity["bagging / inhouse"][0] == f"{member_error:.3f}"
    assert "margins_adaboost.png" in {p.name for p in paths}
