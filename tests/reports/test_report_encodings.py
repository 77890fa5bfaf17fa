"""Two categorical encodings of one dataset never share a cell: the report of an experiment that
ran each table with `native` and `ordinal` (as the README suggests) keeps them apart in every
table and figure, checked against per-encoding means computed by hand."""

import statistics
import time

import pandas as pd
import pytest
from mlflow import MlflowClient
from mlflow.entities import Metric, Param

from reports.analyses.bias_variance import bias_variance_tables
from reports.analyses.margins import margin_figure
from reports.build import build_report
from reports.esl import esl_figure
from reports.figures import learning_curves
from reports.runs import load_runs, open_experiment
from reports.tables import summarize
from reports.tuning import (
    best_so_far_curves,
    best_so_far_figure,
    default_vs_tuned,
    format_default_vs_tuned,
    format_tunability,
    tunability,
)

DATASETS = {"credit": 0.10, "churn": 0.30}  # base error; credit logs the param, churn the tag
ENCODINGS = {"native": 0.0, "ordinal": 0.10}
ENGINES = {"inhouse": 0.0, "xgboost": 0.02}
# (seed, split) noise of each column: six values, mean 0.010, orders that differ, so that the
# paired differences between columns are not all equal.
NOISE = {
    ("inhouse", "native"): [0.000, 0.004, 0.008, 0.012, 0.016, 0.020],
    ("inhouse", "ordinal"): [0.020, 0.016, 0.012, 0.008, 0.004, 0.000],
    ("xgboost", "native"): [0.004, 0.000, 0.012, 0.008, 0.020, 0.016],
    ("xgboost", "ordinal"): [0.016, 0.020, 0.008, 0.000, 0.012, 0.004],
}
FIT = {("inhouse", "native"): 2.0, ("inhouse", "ordinal"): 1.0,
       ("xgboost", "native"): 1.0, ("xgboost", "ordinal"): 4.0}  # fmt: skip
PARITY = {"native": (1e-6, 0.0), "ordinal": (5e-6, 0.01)}  # max_abs_diff, metric_diff
SEEDS = (0, 1, 2)


def splits(dataset: str, engine: str, encoding: str) -> list[float]:
    """The six (seed, split) test errors of a column: seed s holds values 2s and 2s + 1."""
    base = DATASETS[dataset] + ENCODINGS[encoding] + ENGINES[engine]
    return [base + noise for noise in NOISE[engine, encoding]]


def log_job(client, experiment, dataset, engine, encoding, seed, run_key) -> None:
    """A job as experiments/run.py logs it; the encoding as the param dataset.categorical
    (credit) or the tag data.encoding (churn)."""
    values = splits(dataset, engine, encoding)[2 * seed : 2 * seed + 2]
    tags = {"dataset": dataset, "method": "gbt", "engine": engine, "loss": "logistic",
            "seed": str(seed), "task": "binary", "status": "ok", "run_key": run_key,
            "data.source": f"file {dataset}.csv", "data.rows": "500",
            "data.numeric_features": "3", "data.categorical_features": "2"}  # fmt: skip
    if dataset == "churn":
        tags["data.encoding"] = encoding
    run = client.create_run(experiment, tags=tags)
    if dataset == "credit":
        client.log_param(run.info.run_id, "dataset.categorical", encoding)
    client.log_batch(run.info.run_id, params=[Param("eval.kind", "holdout"),
                                              Param("eval.test_size", "0.25")])  # fmt: skip
    now = int(time.time() * 1000)
    metrics = [
        Metric("test_error", sum(values) / 2, now, 0),
        *(Metric("split_test_error", v, now, split) for split, v in enumerate(values)),
        Metric("fit_seconds", FIT[engine, encoding], now, 0),
        Metric("predict_seconds", 0.1, now, 0),
    ]
    if engine == "xgboost":
        max_abs, metric_diff = PARITY[encoding]
        metrics += [Metric("parity_max_abs_diff", max_abs, now, 0),
                    Metric("parity_metric_diff", metric_diff, now, 0)]  # fmt: skip
    client.log_batch(run.info.run_id, metrics=metrics)
    client.set_terminated(run.info.run_id)


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> str:
    """Experiment `encodings`: 2 datasets x 2 encodings x 2 engines x 3 seeds; `one_engine`:
    credit x 2 encodings, in-house only; `sources`: where a run's encoding is read from."""
    root = tmp_path_factory.mktemp("encodings_store")
    uri = f"sqlite:///{root}/mlflow.db"
    client = MlflowClient(tracking_uri=uri)
    both = client.create_experiment("encodings", artifact_location=str(root / "artifacts"))
    one = client.create_experiment("one_engine", artifact_location=str(root / "artifacts"))
    for dataset in DATASETS:
        for encoding in ENCODINGS:
            for seed in SEEDS:
                for engine in ENGINES:
                    key = f"{dataset}-{engine}-{encoding}-{seed}"
                    log_job(client, both, dataset, engine, encoding, seed, key)
                if dataset == "credit":
                    key = f"one-{encoding}-{seed}"
                    log_job(client, one, dataset, "inhouse", encoding, seed, key)
    sources = client.create_experiment("sources", artifact_location=str(root / "artifacts"))
    for tags, params in [({"data.encoding": "native"}, {}), ({}, {"dataset.categorical": "onehot"}),
                         ({"data.encoding": "ordinal"}, {"dataset.categorical": "native"}),
                         ({}, {})]:  # fmt: skip
        run = client.create_run(sources, tags={"dataset": "d", "status": "ok", **tags})
        for name, value in params.items():
            client.log_param(run.info.run_id, name, value)
    return uri


@pytest.fixture(scope="module")
def report(store, tmp_path_factory):
    out = tmp_path_factory.mktemp("encodings_report")
    return out, build_report(store, "encodings", out)


def sections(markdown: str) -> dict[str, dict[str, list[str]]]:
    """Every pipe table of tables.md by title: {row label: cells}, the header row included."""
    tables = {}
    for section in markdown.split("## ")[1:]:
        title, _, body = section.partition("\n")
        lines = [line for line in body.splitlines() if line.startswith("|")]
        rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines]
        tables[title] = {row[0]: row[1:] for row in [rows[0], *rows[2:]]}
    return tables


def mean_of(cell: str) -> float:
    """The mean of a `mean ± std` cell, bold or underline marks stripped."""
    return float(cell.strip("*").removeprefix("<u>").split(" ±")[0])


COLUMNS = [("inhouse", "native"), ("inhouse", "ordinal"), ("xgboost", "native"),
           ("xgboost", "ordinal")]  # fmt: skip


def test_load_runs_reads_the_encoding_tag_else_the_param_else_none(store):
    client, experiment_id = open_experiment(store, "sources")
    runs = load_runs(client, experiment_id)
    assert sorted(runs["encoding"]) == ["native", "none", "onehot", "ordinal"]


def test_one_row_per_dataset_and_a_column_per_engine_and_encoding(report):
    tables = sections((report[0] / "tables.md").read_text())
    metric = tables["test_error"]
    assert metric["dataset"] == [f"gbt / {engine} / {encoding}" for engine, encoding in COLUMNS]
    assert sorted(metric) == ["average rank", "churn", "credit", "dataset"]
    for dataset in DATASETS:
        # each cell is its own encoding's mean (credit in-house: 0.110 native, 0.210 ordinal),
        # never the two encodings' average (0.160)
        expected = [statistics.mean(splits(dataset, *column)) for column in COLUMNS]
        assert [mean_of(cell) for cell in metric[dataset]] == pytest.approx(expected, abs=5e-4)
        native = splits(dataset, "inhouse", "native")
        both = native + splits(dataset, "inhouse", "ordinal")
        assert statistics.mean(both) - mean_of(metric[dataset][0]) > 0.04
        std = statistics.stdev(native)
        assert metric[dataset][0] == f"**{statistics.mean(native):.3f} ± {std:.3f}**"
    # ranks on both datasets: in-house native 1, in-house ordinal 3, xgboost native 2, ordinal 4
    assert metric["average rank"] == ["1.00", "3.00", "2.00", "4.00"]
    assert tables["friedman"]["test_error"][:2] == ["4", "2"]  # k = 4 columns, N = 2 datasets
    across = tables["test_error: across datasets vs gbt / inhouse / native"]
    assert list(across) == ["column", "gbt / inhouse / ordinal", "gbt / xgboost / native",
                            "gbt / xgboost / ordinal"]  # fmt: skip


def test_timing_ratios_compare_jobs_of_the_same_encoding(report):
    timing = sections((report[0] / "tables.md").read_text())["timing"]
    # xgboost native 1 s against in-house native 2 s: ratio 2; ordinal 4 s against 1 s: 0.25
    # (mixing encodings would pair 2/4 and 1/1 as well)
    assert timing["gbt / inhouse / native"] == ["6", "2", "0.1", "–", "–"]
    assert timing["gbt / xgboost / native"] == ["6", "1", "0.1", "2.00", "1.00"]
    assert timing["gbt / xgboost / ordinal"] == ["6", "4", "0.1", "0.25", "1.00"]


def test_parity_per_encoding(report):
    parity = sections((report[0] / "tables.md").read_text())["parity"]
    assert parity == {"method / engine / encoding": ["runs", "max_abs_diff", "mean_metric_diff"],
                      "gbt / xgboost / native": ["6", "1e-06", "0"],
                      "gbt / xgboost / ordinal": ["6", "5e-06", "0.01"]}  # fmt: skip


def test_datasets_table_names_the_encodings(report):
    datasets = sections((report[0] / "datasets.md").read_text())["datasets"]
    header = datasets["dataset"]
    assert header[header.index("categorical") + 1] == "encodings"
    assert datasets["credit"][header.index("encodings")] == "native, ordinal"
    assert datasets["churn"][header.index("encodings")] == "native, ordinal"


def test_baseline_names_the_encoding(store, tmp_path):
    build_report(store, "encodings", tmp_path, baseline="gbt/xgboost/ordinal")
    tables = sections((tmp_path / "tables.md").read_text())
    assert "test_error: across datasets vs gbt / xgboost / ordinal" in tables


def test_one_engine_two_encodings_are_two_columns_not_their_average(store, tmp_path):
    build_report(store, "one_engine", tmp_path)
    tables = sections((tmp_path / "tables.md").read_text())
    metric = tables["test_error"]
    assert metric["dataset"] == ["gbt / inhouse / native", "gbt / inhouse / ordinal"]
    native, ordinal = splits("credit", "inhouse", "native"), splits("credit", "inhouse", "ordinal")
    assert [mean_of(cell) for cell in metric["credit"]] == pytest.approx(
        [statistics.mean(native), statistics.mean(ordinal)], abs=5e-4
    )
    # ordinal - native on 6 (seed, split) pairs: fewer than a verdict needs, each encoding its
    # own cell and verdict
    assert tables["test_error: verdict counts"] == {
        "column": ["best", "tie", "worse", "untested"],
        "gbt / inhouse / native": ["1", "0", "0", "0"],
        "gbt / inhouse / ordinal": ["0", "0", "0", "1"],
    }


def long_table(rows: list[tuple], columns: list[str]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=columns)


def test_learning_curves_draw_a_line_per_encoding():
    columns = ["dataset", "method", "engine", "encoding", "seed", "rounds", "value"]
    rows = [("d", "gbt", "inhouse", encoding, seed, rounds, level + 0.1 * seed + rounds / 100)
            for encoding, level in [("native", 0.1), ("ordinal", 0.3)]
            for seed in (0, 1) for rounds in (10, 20)]  # fmt: skip
    figure = learning_curves(long_table(rows, columns), "curve_test_error")
    lines = {line.get_label(): line.get_ydata().tolist() for line in figure.axes[0].lines}
    # per encoding, the mean over seeds 0 and 1 (+0.05) at 10 and 20 rounds
    assert lines.keys() == {"gbt / inhouse / native", "gbt / inhouse / ordinal"}
    assert lines["gbt / inhouse / native"] == pytest.approx([0.25, 0.35])
    assert lines["gbt / inhouse / ordinal"] == pytest.approx([0.45, 0.55])


def test_bias_variance_rows_per_encoding():
    runs = pd.DataFrame({"dataset": "d", "method": "gbt", "engine": "inhouse",
                         "encoding": ["native", "native", "ordinal", "ordinal"],
                         "bv_loss": [0.1, 0.3, 0.5, 0.7], "bv_bias": [0.1, 0.1, 0.2, 0.2],
                         "bv_variance": [0.0, 0.2, 0.3, 0.5]})  # fmt: skip
    (table,) = bias_variance_tables(runs)
    assert table.cells.index.name == "method / engine / encoding"
    # loss 0.1, 0.3 (native) and 0.5, 0.7 (ordinal): means 0.2 and 0.6, std sqrt(0.02)
    assert table.cells["loss"].to_dict() == {"gbt / inhouse / native": "0.200 ± 0.141",
                                             "gbt / inhouse / ordinal": "0.600 ± 0.141"}


def test_tuning_tables_keep_encodings_apart():
    values = pd.DataFrame(
        [("d", method, "inhouse", encoding, seed, 0, value)
         for encoding, default, tuned in [("native", 0.20, 0.15), ("ordinal", 0.40, 0.38)]
         for seed in range(6)
         for method, value in [("gbt", default + seed / 100), ("gbt+tpe", tuned + seed / 99)]],
        columns=["dataset", "method", "engine", "encoding", "seed", "split", "value"],
    )  # fmt: skip
    comparison = default_vs_tuned(summarize(values, "test_error"))
    gains = comparison.set_index("encoding")["gain"]
    # per encoding: default mean 0.20 + 0.025 and tuned 0.15 + 15/594
    assert gains["native"] == pytest.approx(0.05 + 0.025 - 15 / 594)
    assert gains["ordinal"] == pytest.approx(0.02 + 0.025 - 15 / 594)
    assert list(format_default_vs_tuned(comparison, "test_error").cells.index) == [
        "d: gbt / inhouse / native (tpe)", "d: gbt / inhouse / ordinal (tpe)"]
    runs = pd.DataFrame({"dataset": "d", "method": "gbt+tpe", "engine": "inhouse",
                         "encoding": ["native", "native", "ordinal", "ordinal"],
                         "default_test_error": [0.3, 0.3, 0.5, 0.5],
                         "test_error": [0.2, 0.2, 0.45, 0.45],
                         "tunability_max_depth_test_error": [0.25, 0.25, 0.5, 0.5]})  # fmt: skip
    table = tunability(runs, "test_error")
    assert list(format_tunability(table, "test_error").cells.index) == [
        "gbt / inhouse / native (tpe): max_depth", "gbt / inhouse / ordinal (tpe): max_depth"]
    table = table.set_index("encoding")
    assert table.loc["native", "tunability"] == pytest.approx(0.05)
    assert table.loc["native", "share"] == pytest.approx(0.5)
    assert table.loc["ordinal", "tunability"] == pytest.approx(0.0)
    trials = pd.DataFrame({"dataset": "d", "method": "gbt+tpe", "engine": "inhouse",
                           "encoding": ["native", "native", "ordinal", "ordinal"],
                           "seed": 0, "run_id": ["r1", "r1", "r2", "r2"], "outer_split": 0,
                           "metric": "test_error", "trial": [0, 1, 0, 1],
                           "inner": [0.2, 0.1, 0.4, 0.3],
                           "test": [0.3, 0.1, 0.5, 0.4]})  # fmt: skip
    curves = best_so_far_curves(trials)
    by_encoding = curves.set_index(["encoding", "trials"])["value"]
    assert by_encoding[("native", 2)] == pytest.approx(0.1)
    assert by_encoding[("ordinal", 2)] == pytest.approx(0.4)
    ax = best_so_far_figure(curves, "test_error").axes[0]
    assert {line.get_label(): line.get_ydata().tolist() for line in ax.get_lines()} == {
        "gbt+tpe / inhouse / native": pytest.approx([0.3, 0.1]),  # TPE: its real order
        "gbt+tpe / inhouse / ordinal": pytest.approx([0.5, 0.4])}


def test_esl_figure_draws_a_line_per_engine_and_encoding():
    curves = pd.DataFrame(
        [("h", "adaboost_400", "inhouse", encoding, seed, rounds, level + rounds / 1000 + seed / 10)
         for encoding, level in [("native", 0.1), ("ordinal", 0.2)]
         for seed in (0, 1) for rounds in (10, 400)],  # fmt: skip
        columns=["dataset", "method", "engine", "encoding", "seed", "rounds", "value"],
    )
    runs = pd.DataFrame(
        [("h", method, "inhouse", encoding, error + shift)
         for method, error in [("adaboost_400", 0.1), ("stump", 0.4), ("large_tree", 0.25)]
         for encoding, shift in [("native", 0.0), ("ordinal", 0.02)]],  # fmt: skip
        columns=["dataset", "method", "engine", "encoding", "test_error"],
    )
    ax = esl_figure(curves, runs, "h").axes[0]
    lines = {line.get_label(): line.get_ydata().tolist() for line in ax.get_lines()}
    # mean over seeds 0 and 1 (+0.05) at 10 and 400 rounds
    assert lines["AdaBoost, inhouse / native (last 55.0%)"] == pytest.approx([0.16, 0.55])
    assert lines["AdaBoost, inhouse / ordinal (last 65.0%)"] == pytest.approx([0.26, 0.65])
    levels = {c.get_label(): round(c.get_segments()[0][0][1], 6) for c in ax.collections}
    assert levels == {"single stump, inhouse / native (40.0%)": 0.4,
                      "244-node tree, inhouse / native (25.0%)": 0.25,
                      "single stump, inhouse / ordinal (42.0%)": 0.42,
                      "244-node tree, inhouse / ordinal (27.0%)": 0.27}  # fmt: skip


def test_margin_figure_draws_a_distribution_per_engine_and_encoding():
    margins = pd.DataFrame(
        [("d", "adaboost", "inhouse", encoding, 0, 20, margin)
         for encoding, values in [("native", [0.1, 0.3]), ("ordinal", [-0.2, 0.4, 0.6])]
         for margin in values],  # fmt: skip
        columns=["dataset", "method", "engine", "encoding", "seed", "rounds", "margin"],
    )
    ax = margin_figure(margins, "adaboost").axes[0]
    steps = {line.get_label(): line.get_xdata().tolist() for line in ax.get_lines()
             if line.get_label().startswith("20 rounds")}  # fmt: skip
    assert steps == {"20 rounds, inhouse / native": [0.1, 0.3],
                     "20 rounds, inhouse / ordinal": [-0.2, 0.4, 0.6]}  # fmt: skip
