"""The report of a small synthetic MLflow store, checked against values computed by hand."""

import math
import re
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from mlflow import MlflowClient
from mlflow.entities import Metric, Param

from reports.__main__ import main
from reports.build import build_report
from reports.runs import ReportError, load_runs, load_split_values, open_experiment
from reports.tables import ok_runs, summarize

ROOT = Path(__file__).resolve().parents[2]
RF, GBT = ("random_forest", "inhouse"), ("gbt", "xgboost")
# Split values per (dataset, pair) and seed: 2 folds (classification) or a holdout (regression).
SPLITS = {
    ("iris", RF): [[0.10, 0.20], [0.30, 0.10], [0.20, 0.30]],
    ("iris", GBT): [[0.05, 0.05], [0.10, 0.00], [0.05, 0.05]],
    ("breast_cancer", RF): [[0.04, 0.06], [0.05, 0.05], [0.03, 0.07]],
    ("breast_cancer", GBT): [[0.08, 0.10], [0.09, 0.09], [0.07, 0.11]],
    ("friedman1", RF): [[2.0], [2.5], [3.0]],
    ("friedman1", GBT): [[1.0], [1.5], [2.0]],
}
TASKS = {"iris": "multiclass", "breast_cancer": "binary", "friedman1": "regression"}
SUMMARY_ONLY = ("friedman1", GBT, 2)  # logs only its summary metric: the report falls back to it


def log_run(client, experiment_id, start, dataset, pair, seed, status, splits, run_key=None):
    """One run as experiments/run.py logs it: contract tags, the params of its splits' sizes
    (2-fold for classification, n_test/n_train = 1; a 25% holdout for regression, 1/3), summary
    metric, split history."""
    metric = "test_rmse" if TASKS.get(dataset) == "regression" else "test_error"
    tags = {
        "dataset": dataset,
        "method": pair[0],
        "engine": pair[1],
        "loss": "default",
        "seed": str(seed),
        "task": TASKS.get(dataset, "multiclass"),
        "status": status,
        "git_commit": "abc123",
        "run_key": run_key or f"{dataset}-{pair}-{seed}-{status}",
    }
    run = client.create_run(experiment_id, start_time=start, tags=tags)
    now = int(time.time() * 1000)
    metrics = [Metric(metric, sum(splits) / len(splits), now, 0)] if splits else []
    if (dataset, pair, seed) != SUMMARY_ONLY:
        metrics += [Metric(f"split_{metric}", v, now, step) for step, v in enumerate(splits)]
    metrics.append(Metric("fit_seconds", 0.5, now, 0))
    regression = TASKS.get(dataset) == "regression"
    params = [Param("eval.kind", "holdout" if regression else "kfold"),
              Param("eval.test_size", "0.25"), Param("eval.n_splits", "2")]  # fmt: skip
    client.log_batch(run.info.run_id, metrics=metrics, params=params)
    client.set_terminated(run.info.run_id)


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> str:
    """Experiment `default`: 18 ok runs, a failed one, a skipped one and a superseded ok run;
    experiment `esl_10_2`: one failed run only."""
    uri_dir = tmp_path_factory.mktemp("store")
    uri = f"sqlite:///{uri_dir}/mlflow.db"
    client = MlflowClient(tracking_uri=uri)
    default = client.create_experiment("default", artifact_location=str(uri_dir / "artifacts"))
    start = 1_700_000_000_000
    for (dataset, pair), per_seed in SPLITS.items():
        for seed, splits in enumerate(per_seed):
            start += 1000
            log_run(client, default, start, dataset, pair, seed, "ok", splits, f"k-{start}")
    # An older ok run with the run_key of breast_cancer/RF/seed 0, replaced by the rerun above.
    log_run(
        client,
        default,
        1_600_000_000_000,
        "breast_cancer",
        RF,
        0,
        "ok",
        [0.5, 0.5],
        run_key=f"k-{1_700_000_000_000 + 7000}",
    )
    # Metrics logged on both, so that only their status can keep them out of the tables.
    log_run(client, default, start + 1000, "iris", RF, 3, "failed", [0.9, 0.9])
    log_run(client, default, start + 2000, "digits", ("adaboost", "lightgbm"), 0, "skipped", [0.5])
    esl = client.create_experiment("esl_10_2")
    log_run(client, esl, start, "hastie_10_2", RF, 0, "failed", [])
    return uri


def sample_std(values: list[float]) -> float:
    """sqrt(sum (v - mean)^2 / (n - 1)), written out."""
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))


def markdown_section(markdown: str, metric: str) -> list[list[str]]:
    """The rows (header first, separator dropped) of the pipe table under `## metric`."""
    section = markdown.split(f"## {metric}\n")[1].split("\n## ")[0]
    lines = [line for line in section.splitlines() if line.startswith("|")]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[:1] + lines[2:]]


@pytest.fixture(scope="module")
def report(store, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("out")
    build_report(store, "default", out)
    return out


def test_cell_mean_and_sample_std_pool_seeds_and_splits(store):
    client, experiment_id = open_experiment(store, "default")
    ok = ok_runs(load_runs(client, experiment_id))
    values = load_split_values(client, ok[ok["test_error"].notna()], "test_error")
    table = summarize(values, "test_error")
    # iris / RF: splits 0.1 0.2 0.3 0.1 0.2 0.3 -> mean 0.2, sum of squares 0.04, std sqrt(0.04/5).
    assert table.mean.loc["iris", RF] == pytest.approx(0.2)
    assert table.std.loc["iris", RF] == pytest.approx(math.sqrt(0.008))
    assert table.std.loc["iris", RF] == pytest.approx(sample_std([0.1, 0.2, 0.3, 0.1, 0.2, 0.3]))
    assert table.count.loc["iris", RF] == 6
    # breast_cancer / RF: the superseded run (0.5, 0.5) is not counted.
    assert table.mean.loc["breast_cancer", RF] == pytest.approx(0.05)
    assert table.std.loc["breast_cancer", RF] == pytest.approx(math.sqrt(0.001 / 5))


def test_results_csv_has_every_run(report):
    results = pd.read_csv(report / "results.csv")
    assert len(results) == 21
    assert results["status"].value_counts().to_dict() == {"ok": 19, "failed": 1, "skipped": 1}
    assert {"run_id", "dataset", "method", "engine", "seed", "test_error", "test_rmse"} <= set(
        results.columns
    )
    assert not [c for c in results.columns if c.startswith(("split_", "mlflow."))]
    assert "digits" in set(results["dataset"])


def test_markdown_one_row_per_dataset_one_column_per_pair_best_in_bold(report):
    markdown = (report / "tables.md").read_text()
    header, *rows = markdown_section(markdown, "test_error")
    assert header == ["dataset", "gbt / xgboost", "random_forest / inhouse"]
    # 2-fold x 3 seeds: 6 resamples, fewer than a verdict needs (stats.MIN_RESAMPLES): the best
    # is bold, the other cell italic (untested), whatever its difference (breast_cancer: GBT - RF
    # = 0.04 on all 6 pairs, which the naive corrected t called significant with p = 0).
    assert {row[0]: row[1:] for row in rows} == {
        "breast_cancer": ["*0.0900 ± 0.0141*", "**0.0500 ± 0.0141**"],
        "iris": ["**0.050 ± 0.032**", "*0.200 ± 0.089*"],
        "average rank": ["1.50", "1.50"],  # ranks (2, 1) and (1, 2)
    }
    assert len(rows) == 3  # failed (iris seed 3) and skipped (digits, adaboost) runs left out
    # friedman1 / GBT: holdout splits 1.0, 1.5 and the summary 2.0 of the run without history.
    assert markdown_section(markdown, "test_rmse") == [
        ["dataset", "gbt / xgboost", "random_forest / inhouse"],
        ["friedman1", "**1.50 ± 0.50**", "*2.50 ± 0.50*"],
        ["average rank", "1.00", "2.00"],
    ]
    verdicts = pd.read_csv(report / "verdicts.csv")
    assert verdicts.columns.tolist() == ["metric", "dataset", "column", "n", "mean", "verdict",
                                         "p"]
    assert verdicts.set_index(["metric", "dataset", "column"])["verdict"].to_dict() == {
        ("test_error", "breast_cancer", "gbt / xgboost"): "untested",
        ("test_error", "breast_cancer", "random_forest / inhouse"): "best",
        ("test_error", "iris", "gbt / xgboost"): "best",
        ("test_error", "iris", "random_forest / inhouse"): "untested",
        ("test_rmse", "friedman1", "gbt / xgboost"): "best",
        ("test_rmse", "friedman1", "random_forest / inhouse"): "untested",
    }


def test_verdict_counts_failures_and_the_baseline_across_datasets(store, report, tmp_path):
    markdown = (report / "tables.md").read_text()
    assert markdown_section(markdown, "test_error: verdict counts") == [
        ["column", "best", "tie", "worse", "untested"],
        ["gbt / xgboost", "1", "0", "0", "1"],
        ["random_forest / inhouse", "1", "0", "0", "1"],
    ]
    # the superseded run and the failed one, in the report itself
    assert [row[:4] for row in markdown_section(markdown, "failures and reruns")[1:]] == [
        ["breast_cancer", "random_forest / inhouse", "0", "replaced by a later run of its run_key"],
        ["iris", "random_forest / inhouse", "3", "failed"],
    ]
    # across datasets (2 for test_error): Wilcoxon withheld below 6, the Bayesian test shown
    header, row = markdown_section(markdown, "test_error: across datasets vs gbt / xgboost")
    assert header[:4] == ["column", "datasets", "median difference", "p (Holm)"]
    assert row[:4] == ["random_forest / inhouse", "2", "0.055", "withheld"]
    build_report(store, "default", tmp_path, baseline="random_forest/inhouse")
    swapped = (tmp_path / "tables.md").read_text()
    assert markdown_section(swapped, "test_error: across datasets vs random_forest / inhouse")[
        1][:3] == ["gbt / xgboost", "2", "-0.055"]
    assert "test_rmse: across datasets" not in swapped  # one regression dataset: no headline
    with pytest.raises(ReportError, match="unknown baseline 'gbt/sklearn'; choose one of: gbt/"):
        build_report(store, "default", tmp_path / "bad", baseline="gbt/sklearn")
    assert not (tmp_path / "bad").exists()


def test_latex_booktabs_escaped_and_bold(report):
    tex = (report / "tables.tex").read_text()
    for command in (r"\begin{table}", r"\end{table}", r"\toprule", r"\midrule", r"\bottomrule"):
        # across datasets, 2 metrics, 2 verdict counts, failures, timing
        assert tex.count(command) == 7
    assert r"dataset & gbt / xgboost & random\_forest / inhouse \\" in tex
    assert r"iris & \textbf{0.050 $\pm$ 0.032} & \textit{0.200 $\pm$ 0.089} \\" in tex
    assert r"breast\_cancer & \textit{0.0900 $\pm$ 0.0141} & \textbf{0.0500 $\pm$ 0.0141} \\" in tex
    assert r"friedman1 & \textbf{1.50 $\pm$ 0.50} & \textit{2.50 $\pm$ 0.50} \\" in tex
    assert not re.search(r"(?<!\\)_", tex)


def test_cli_writes_the_report(store, tmp_path):
    assert main(["--experiment", "default", "--out", str(tmp_path), "--tracking-uri", store]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.csv", "tables.md", "tables.tex",
                                                          "verdicts.csv"]


def test_missing_experiment_is_one_line_listing_existing(store):
    result = subprocess.run(
        [sys.executable, "-m", "reports", "--experiment", "missing", "--tracking-uri", store],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert result.returncode != 0
    assert result.stderr.splitlines() == [
        f"error: no MLflow experiment 'missing' in {store}; existing: Default, default, esl_10_2"
    ]


def test_experiment_without_ok_runs_is_one_line(store, tmp_path, capsys):
    assert main(["--experiment", "esl_10_2", "--out", str(tmp_path), "--tracking-uri", store]) == 1
    assert capsys.readouterr().err.splitlines() == [
        f"error: experiment 'esl_10_2' in {store} has no ok run with test_error or test_logloss "
        "or test_rmse (1 failed)"
    ]
    assert not list(tmp_path.iterdir())


def test_missing_store_is_not_created(tmp_path):
    uri = f"sqlite:///{tmp_path}/absent.db"
    with pytest.raises(ReportError, match="existing: none"):
        open_experiment(uri, "default")
    assert not (tmp_path / "absent.db").exists()


def test_runs_from_two_environments_give_one_warning_line():
    from reports.tables import mixed_environments_line

    runs = pd.DataFrame({"env.lock": ["aaa", "aaa", "bbb+modified (xgboost 3.3.0)"],
                         "env.cpu": ["AMD EPYC"] * 3, "version.python": ["3.11.7"] * 3})
    line = mixed_environments_line(runs)
    assert line == ("warning: the runs come from 2 environments (env.lock: aaa, bbb+modified "
                    "(xgboost 3.3.0)); their times and scores may not be comparable")
    assert mixed_environments_line(runs.iloc[:2]) is None
    assert mixed_environments_line(pd.DataFrame({"status": ["ok"]})) is None


def test_two_runs_of_one_cell_seed_and_split_are_refused_not_pooled(tmp_path):
    """Two losses of one method (the tables key by method and engine) would pool as repeats:
    the report stops with one line naming the cell instead of averaging them or crashing."""
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    client = MlflowClient(uri)
    experiment_id = client.create_experiment("losses")
    for key in ("squared", "huber"):
        log_run(client, experiment_id, 1, "friedman1", GBT, 0, "ok", [1.0], run_key=key)
    with pytest.raises(ReportError) as error:
        build_report(uri, "losses", tmp_path / "out")
    assert str(error.value) == (
        "dataset friedman1, column gbt / xgboost: 2 runs share seed 0 and split 0; they differ in "
        "a setting the tables do not tell apart (a loss, a method parameter, or a file run before "
        "its target and reading were tagged): report them apart with --sweep, or from "
        "experiments of their own")
