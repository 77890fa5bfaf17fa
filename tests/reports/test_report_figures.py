"""Timing, parity and Friedman tables, figures (which methods the bars of the CD diagram join)
and the MLflow `report` run of a synthetic store."""

import math
import time

import numpy as np
import pandas as pd
import pytest
from mlflow import MlflowClient
from mlflow.entities import Metric
from scipy.stats import studentized_range

from reports.build import build_report
from reports.figures import cd_diagram, learning_curves
from reports.runs import load_runs, open_experiment
from reports.stats import friedman_nemenyi
from reports.tables import summarize

INHOUSE, XGB, LGBM = ("gbt", "inhouse"), ("gbt", "xgboost"), ("gbt", "lightgbm")
ERROR = {INHOUSE: 0.1, XGB: 0.2, LGBM: 0.3}  # plus 0.01 * dataset index: ranks 1, 2, 3 everywhere
FIT = {INHOUSE: [2.0, 4.0], XGB: [1.0, 1.0], LGBM: [4.0, 4.0]}  # per seed
PREDICT = {INHOUSE: 0.2, XGB: 0.1, LGBM: 0.1}
DATASETS = ["d0", "d1", "d2"]
PARITY_MAX_ABS = {("d0", 0): 1e-6, ("d0", 1): 3e-6, ("d1", 0): 2e-6, ("d1", 1): 1e-6}
PARITY_METRIC = {("d0", 0): 0.0, ("d0", 1): 0.01, ("d1", 0): 0.02, ("d1", 1): 0.0}


def curve(pair: tuple[str, str], seed: int) -> list[tuple[int, float]]:
    """(rounds, error) points: seeds 0 and 1 differ by 0.02, so their mean is the midpoint."""
    return [(10, ERROR[pair] + 0.1 + 0.02 * seed), (20, ERROR[pair] + 0.02 * seed)]


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> str:
    root = tmp_path_factory.mktemp("figures_store")
    uri = f"sqlite:///{root}/mlflow.db"
    client = MlflowClient(tracking_uri=uri)
    experiment = client.create_experiment("timed", artifact_location=str(root / "artifacts"))
    now = int(time.time() * 1000)
    for index, dataset in enumerate(DATASETS):
        for pair in (INHOUSE, XGB, LGBM):
            for seed in (0, 1):
                tags = {"dataset": dataset, "method": pair[0], "engine": pair[1], "loss": "x",
                        "seed": str(seed), "task": "binary", "status": "ok",
                        "run_key": f"{dataset}-{pair}-{seed}"}  # fmt: skip
                run = client.create_run(experiment, tags=tags)
                error = ERROR[pair] + 0.01 * index
                metrics = [
                    Metric("test_error", error, now, 0),
                    Metric("fit_seconds", FIT[pair][seed], now, 0),
                    Metric("predict_seconds", PREDICT[pair], now, 0),
                    *(Metric("split_test_error", error, now, split) for split in (0, 1)),
                    *(Metric("curve_test_error", v, now, step) for step, v in curve(pair, seed)),
                ]
                if pair == XGB and (dataset, seed) in PARITY_MAX_ABS:
                    metrics += [
                        Metric("parity_max_abs_diff", PARITY_MAX_ABS[dataset, seed], now, 0),
                        Metric("parity_metric_diff", PARITY_METRIC[dataset, seed], now, 0),
                    ]
                client.log_batch(run.info.run_id, metrics=metrics)
                client.set_terminated(run.info.run_id)
    return uri


@pytest.fixture(scope="module")
def report(store, tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    paths = build_report(store, "timed", out)
    return out, paths



def test_timing_medians_and_inhouse_ratios_on_common_jobs(report, table_rows):
    rows = table_rows((report[0] / "tables.md").read_text(), "timing")
    assert rows["method / engine"] == [
        "jobs", "fit_seconds", "predict_seconds", "fit_ratio", "predict_ratio"
    ]
    # in-house fit 2, 4 per dataset -> median 3; vs xgboost (1 s) ratios 2, 4 -> median 3.00;
    # vs lightgbm (4 s) ratios 0.5, 1 -> 0.75; predict 0.2 / 0.1 = 2.
    assert rows["gbt / inhouse"] == ["6", "3", "0.2", "–", "–"]
    assert rows["gbt / xgboost"] == ["6", "1", "0.1", "3.00", "2.00"]
    assert rows["gbt / lightgbm"] == ["6", "4", "0.1", "0.75", "2.00"]


def test_parity_largest_max_abs_diff_and_mean_metric_diff(report, table_rows):
    rows = table_rows((report[0] / "tables.md").read_text(), "parity")
    # max(1e-6, 3e-6, 2e-6, 1e-6) = 3e-6; mean(0, 0.01, 0.02, 0) = 0.0075.
    assert rows == {
        "method / engine": ["runs", "max_abs_diff", "mean_metric_diff"],
        "gbt / xgboost": ["4", "3e-06", "0.0075"],
    }


def test_friedman_row_and_average_ranks(report, table_rows):
    markdown = (report[0] / "tables.md").read_text()
    assert table_rows(markdown, "test_error")["average rank"] == ["1.00", "3.00", "2.00"]
    # N = 3 datasets, fewer than 5: the test claims nothing, its cells are withheld (the
    # statistic, 12*3/(3*4) * (1 + 4 + 9 - 12) = 6, is in friedman_nemenyi's result)
    assert table_rows(markdown, "friedman")["test_error"] == ["3", "3", *["withheld"] * 4]
    assert "on which its k columns all have every resample (the dataset is the unit" in markdown
    assert "over the 3 of 3 datasets on which its 3 columns all have every resample" in markdown


def test_figures_written_and_logged_to_a_report_run_left_out_of_the_tables(store, report):
    out, paths = report
    names = sorted(p.relative_to(out).as_posix() for p in paths if p.parent.name == "figures")
    assert names == [  # no CD diagram over 3 datasets
        "figures/curve_test_error.pdf",
        "figures/curve_test_error.png",
    ]
    assert all((out / name).stat().st_size > 1000 for name in names)
    client, experiment_id = open_experiment(store, "timed")
    report_runs = client.search_runs([experiment_id], "tags.status = 'report'")
    assert [run.info.run_name for run in report_runs] == ["report"]
    artifacts = client.list_artifacts(report_runs[0].info.run_id, "figures")
    assert sorted(a.path for a in artifacts) == names
    assert len(load_runs(client, experiment_id)) == 18
    assert len(pd.read_csv(out / "results.csv")) == 18
    tables = (out / "tables.md").read_text()
    build_report(store, "timed", out)  # the first report run is in the store now
    assert (out / "tables.md").read_text() == tables
    assert len(pd.read_csv(out / "results.csv")) == 18


def test_learning_curve_is_the_mean_over_seeds_per_dataset():
    rows = [
        ("d0", *pair, str(seed), rounds, value)
        for pair in (INHOUSE, XGB)
        for seed in (0, 1)
        for rounds, value in curve(pair, seed)
    ]
    columns = ["dataset", "method", "engine", "seed", "rounds", "value"]
    figure = learning_curves(pd.DataFrame(rows, columns=columns), "curve_test_error")
    ax = figure.axes[0]
    assert (ax.get_title(), ax.get_ylabel()) == ("d0", "test_error")
    assert ax.get_xlabel().startswith("rounds")
    lines = {line.get_label(): line for line in ax.get_lines()}
    # in-house: (0.2 + 0.22) / 2 = 0.21 at 10 rounds, (0.1 + 0.12) / 2 = 0.11 at 20.
    assert list(lines["gbt / inhouse"].get_xdata()) == [10, 20]
    assert list(lines["gbt / inhouse"].get_ydata()) == pytest.approx([0.21, 0.11])
    assert list(lines["gbt / xgboost"].get_ydata()) == pytest.approx([0.31, 0.21])
    # one colour per method, one dash pattern per engine
    assert lines["gbt / inhouse"].get_color() == lines["gbt / xgboost"].get_color()
    assert (lines["gbt / inhouse"].get_linestyle(), lines["gbt / xgboost"].get_linestyle()) == (
        "-", ":"
    )
    assert [t.get_text() for t in figure.legends[0].get_texts()] == [
        "gbt / inhouse", "gbt / xgboost"
    ]


# Orders of five methods, best first, and on how many of N = 30 datasets each occurs.
ORDERS = {"BADCE": 9, "ABCDE": 12, "CBADE": 9}


def bars(ax, gid: str) -> list[tuple[float, float]]:
    """(start, end) x-extents, in rank units, of the horizontal segments tagged `gid`."""
    return [
        (float(segment[:, 0].min()), float(segment[:, 0].max()))
        for collection in ax.collections
        if collection.get_gid() == gid
        for segment in collection.get_segments()
    ]


def test_cd_diagram_bars_join_the_groups_within_the_critical_difference():
    """Average ranks (57, 51, 81, 111, 150) / 30 = A 1.9, B 1.7, C 2.7, D 3.7, E 5.0 (B best, so
    rank order is not column order) and CD = q_0.05 sqrt(5*6 / (6*30)) = 2.728 * 0.4082 = 1.114.
    C - B = 1.0 and D - C = 1.0 are below CD, D - A = 1.8 and E - D = 1.3 are not: one bar joins
    {A, B, C}, one {C, D}, and none reaches E. A method is on a bar when its average rank lies
    between the bar's ends."""
    rows = [
        (f"d{order}{copy}", method, "inhouse", "0", 0, 0.1 * rank)
        for order, copies in ORDERS.items()
        for copy in range(copies)
        for rank, method in enumerate(order, start=1)
    ]
    columns = ["dataset", "method", "engine", "seed", "split", "value"]
    result = friedman_nemenyi(summarize(pd.DataFrame(rows, columns=columns), "test_error"))
    ranks = result.avg_ranks.droplevel("engine")
    assert ranks.to_dict() == pytest.approx({"A": 1.9, "B": 1.7, "C": 2.7, "D": 3.7, "E": 5.0})
    cd = studentized_range.ppf(0.95, 5, np.inf) / math.sqrt(2) * math.sqrt(5 * 6 / (6 * 30))
    assert cd == pytest.approx(1.114, abs=5e-4)

    ax = cd_diagram(result).axes[0]
    assert ax.get_title() == "test_error: Nemenyi CD (alpha 0.05, N = 30)"
    wider = friedman_nemenyi(summarize(pd.DataFrame(rows, columns=columns), "test_error"), 0.1)
    assert cd_diagram(wider).axes[0].get_title() == "test_error: Nemenyi CD (alpha 0.1, N = 30)"
    [(cd_start, cd_end)] = bars(ax, "cd")
    assert cd_end - cd_start == pytest.approx(cd)
    groups = [
        {method for method, rank in ranks.items() if start <= rank <= end}
        for start, end in bars(ax, "clique")
    ]
    assert sorted(map(sorted, groups)) == [["A", "B", "C"], ["C", "D"]]
    # each bar ends at its outermost members (the 0.03 overhang aside), not in empty space
    for (start, end), group in zip(bars(ax, "clique"), groups, strict=True):
        members = ranks[sorted(group)]
        assert (start, end) == pytest.approx((members.min(), members.max()), abs=0.05)
