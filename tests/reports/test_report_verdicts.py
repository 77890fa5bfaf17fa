"""Per-dataset verdicts through the whole report, on hand-made runs of the shapes that misled
readers: a method one test row worse on every resample, one 4-6 rows worse on each of 10 random
holdout splits, a cell with a failed seed, too few resamples to test; verdicts.csv, the marks of
tables.md and tables.tex, and the verdict counts read from one source."""

import math
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from mlflow import MlflowClient
from mlflow.entities import Metric, Param
from omegaconf import OmegaConf
from scipy.stats import t as student_t

from reports.build import build_report
from reports.stats import MIN_RESAMPLES
from reports.verdicts import CSV_COLUMNS

ROOT = Path(__file__).resolve().parents[2]
BEST_COLUMN, OTHER = ("gbt", "xgboost"), ("random_forest", "inhouse")
FAILING = ("extra_trees", "inhouse")


def log_job(client, experiment_id, dataset, pair, seed, values, *, kind, rows, status="ok",
            error=None):
    """One job run as experiments/run.py logs it: tags, its splits' params and data.rows, the
    per-split test_error history and its mean."""
    tags = {"dataset": dataset, "method": pair[0], "engine": pair[1], "loss": "auto",
            "seed": str(seed), "task": "binary", "status": status, "git_commit": "abc",
            "run_key": f"{dataset}-{pair}-{seed}", "data.rows": str(rows)}
    if error:
        tags["error"] = error
    run = client.create_run(experiment_id, tags=tags)
    now = int(time.time() * 1000)
    metrics = [] if status != "ok" else [
        Metric("test_error", float(np.mean(values)), now, 0),
        *(Metric("split_test_error", float(v), now, step) for step, v in enumerate(values)),
    ]
    params = [Param("eval.kind", kind), Param("eval.test_size", "0.25"),
              Param("eval.n_splits", "5")]
    client.log_batch(run.info.run_id, metrics=metrics, params=params)
    client.set_terminated(run.info.run_id)


def base_errors(n_seeds: int, n_splits: int, n_test: float, seed: int) -> np.ndarray:
    """Error rates of 2-8 wrong rows out of n_test, one row per seed, one column per split."""
    return np.random.RandomState(seed).randint(2, 9, (n_seeds, n_splits)) / n_test


# (dataset, kind, rows, seeds, splits): wine-sized 5-fold x 3 seeds (n_test 35.6), wine-sized
# 25% holdout x 3 seeds (n_test 45), a 400-row 25% holdout x 10 seeds (n_test 100)
ONE_ROW_KFOLD = ("one_row_kfold", "kfold", 178, 3, 5)
ONE_ROW_HOLDOUT = ("one_row_holdout", "holdout", 178, 3, 1)
FIVE_ROWS = ("five_rows", "holdout", 400, 10, 1)
FAILED_SEED = ("failed_seed", "kfold", 178, 3, 5)


def n_test(kind: str, rows: int) -> float:
    return rows / 5 if kind == "kfold" else math.ceil(0.25 * rows)


@pytest.fixture(scope="module")
def shapes(tmp_path_factory):
    """The report of an experiment of the four shapes; returns (out dir, verdicts.csv rows)."""
    root = tmp_path_factory.mktemp("verdicts")
    uri = f"sqlite:///{root}/mlflow.db"
    client = MlflowClient(uri)
    experiment_id = client.create_experiment("shapes", artifact_location=str(root / "art"))
    worse_rows = np.array([4, 5, 6, 5, 4, 6, 5, 4, 6, 5])
    for dataset, kind, rows, seeds, splits in (ONE_ROW_KFOLD, ONE_ROW_HOLDOUT, FIVE_ROWS,
                                               FAILED_SEED):
        size = n_test(kind, rows)
        best = base_errors(seeds, splits, size, len(dataset))
        if dataset == FIVE_ROWS[0]:
            other = best + worse_rows[:, None] / size
        else:
            other = best + 1 / size  # one more test row wrong on every resample
        for seed in range(seeds):
            log_job(client, experiment_id, dataset, BEST_COLUMN, seed, best[seed], kind=kind,
                    rows=rows)
            log_job(client, experiment_id, dataset, OTHER, seed, other[seed], kind=kind,
                    rows=rows)
            if dataset == FAILED_SEED[0]:  # better than the best, but its seed 2 failed
                failed = seed == 2
                log_job(client, experiment_id, dataset, FAILING, seed, best[seed] - 1 / size,
                        kind=kind, rows=rows, status="failed" if failed else "ok",
                        error="ValueError: a made-up failure" if failed else None)
    # one column run on 5 seeds where the others ran 3; a NaN split value; a failed rerun
    size = n_test("kfold", 178)
    best = base_errors(5, 5, size, 7)
    for seed in range(5):
        for pair, shift in ((BEST_COLUMN, 0), (OTHER, 6), (FAILING, 1)):
            if seed < 3 or pair == OTHER:
                log_job(client, experiment_id, "more_seeds", pair, seed, best[seed] + shift / size,
                        kind="kfold", rows=178)
    for seed in range(3):
        nan_split = np.where(np.arange(5) == 2, np.nan, best[seed]) if seed == 1 else best[seed]
        log_job(client, experiment_id, "nan_value", BEST_COLUMN, seed, nan_split, kind="kfold",
                rows=178)
        log_job(client, experiment_id, "nan_value", OTHER, seed, best[seed] + 6 / size,
                kind="kfold", rows=178)
        if seed == 0:
            log_job(client, experiment_id, "nan_value", OTHER, seed, best[seed], kind="kfold",
                    rows=178, status="failed", error="MemoryError: the rerun died")
    out = root / "out"
    build_report(uri, "shapes", out)
    found = pd.read_csv(out / "verdicts.csv")
    return out, found.set_index(["dataset", "column"])


def test_verdicts_csv_has_the_contract_columns_and_a_row_per_cell(shapes):
    out, found = shapes
    assert pd.read_csv(out / "verdicts.csv").columns.tolist() == CSV_COLUMNS
    assert len(found) == 6 * 2 + 2  # extra trees ran on two datasets
    assert set(found["verdict"]) <= {"best", "tie", "worse", "untested"}


def test_one_row_worse_on_every_resample_is_not_worse(shapes):
    """5-fold x 3 seeds, one more wrong row of 35.6 on every resample: d = 1/35.6 on all 15,
    s^2 = 0, floored at (d - d^2) / n_test; t = d / sqrt((1/15 + 1/4) floor) = 1.80, 14 df,
    p = 0.093: a tie. The naive test gave p = 0 (worse)."""
    _, found = shapes
    row = found.loc[("one_row_kfold", "random_forest / inhouse")]
    d = 1 / 35.6
    t = d / math.sqrt((1 / 15 + 1 / 4) * (d - d * d) / 35.6)
    assert row["p"] == pytest.approx(2 * student_t.sf(t, 14))
    assert (row["verdict"], row["n"]) == ("tie", 15)
    assert found.loc[("one_row_kfold", "gbt / xgboost"), "verdict"] == "best"


def test_three_holdout_seeds_are_untested_not_worse(shapes):
    _, found = shapes
    row = found.loc[("one_row_holdout", "random_forest / inhouse")]
    assert (row["verdict"], row["n"]) == ("untested", 3)
    assert math.isnan(row["p"])


def test_four_to_six_rows_worse_on_ten_holdout_splits_is_worse(shapes):
    """d = (4..6)/100, mean 0.05, s^2 = 0.0000667 below the floor (0.05 - 0.0025) / 100:
    t = 0.05 / sqrt((1/10 + 100/300) 0.000475) = 3.48, 9 df, p = 0.007."""
    _, found = shapes
    row = found.loc[("five_rows", "random_forest / inhouse")]
    floor = (0.05 - 0.05**2) / 100
    t = 0.05 / math.sqrt((1 / 10 + 100 / 300) * floor)
    assert row["p"] == pytest.approx(2 * student_t.sf(t, 9))
    assert (row["verdict"], row["n"]) == ("worse", 10)


def test_a_cell_with_a_failed_seed_is_marked_not_bold_and_listed(shapes, table_rows):
    out, found = shapes
    failing = found.loc[("failed_seed", "extra_trees / inhouse")]
    assert (failing["verdict"], failing["n"]) == ("untested", 10)
    assert found.loc[("failed_seed", "gbt / xgboost"), "verdict"] == "best"
    markdown = (out / "tables.md").read_text()
    rows = table_rows(markdown, "test_error")
    cells = dict(zip(rows["dataset"], rows["failed_seed"], strict=True))
    assert cells["extra_trees / inhouse"].startswith("*") and "[10/15]" in cells[
        "extra_trees / inhouse"]
    assert not cells["extra_trees / inhouse"].startswith("**")
    assert cells["gbt / xgboost"].startswith("**")
    failures = table_rows(markdown, "failures and reruns")
    assert failures["failed_seed"] == ["extra_trees / inhouse", "2", "failed",
                                       "ValueError: a made-up failure"]


def test_a_column_run_on_more_seeds_leaves_the_others_complete(shapes, table_rows):
    """random_forest ran 5 seeds, the others 3: its 2 extra seeds are left out (and listed), so
    the best of the 15 shared resamples is bold and the worst column is not made `best`."""
    out, found = shapes
    assert found.loc[("more_seeds", "gbt / xgboost"), "verdict"] == "best"
    assert found.loc[("more_seeds", "random_forest / inhouse"), ["n", "verdict"]].tolist() == [
        15, "worse"]
    assert found.loc[("more_seeds", "extra_trees / inhouse"), "n"] == 15
    failures = [row for row in (out / "tables.md").read_text().split("## failures and reruns")[1]
                .splitlines() if row.startswith("| more_seeds")]  # fmt: skip
    assert len(failures) == 2 and all("an extra resample" in row for row in failures)


def test_a_nan_value_is_left_out_and_listed_and_a_failed_rerun_is_listed(shapes, table_rows):
    """gbt's NaN on one split of seed 1 leaves it 14 of the row's 15 resamples: untested, marked
    and listed, never averaged as if complete; its run's other splits still count."""
    out, found = shapes
    assert found.loc[("nan_value", "gbt / xgboost"), ["n", "verdict"]].tolist() == [14,
                                                                                   "untested"]
    assert found.loc[("nan_value", "random_forest / inhouse"), "verdict"] == "best"
    rows = table_rows((out / "tables.md").read_text(), "failures and reruns")
    listed = [cells for label, cells in rows.items() if label == "nan_value"]
    assert listed  # table_rows keeps the last row of a dataset: both are in the markdown
    markdown = (out / "tables.md").read_text()
    assert "left out of test_error: no value (NaN) |" in markdown.replace("  ", "")
    assert "failed on a rerun: the tables keep its earlier ok result" in markdown
    assert "MemoryError: the rerun died" in markdown


def test_untested_looks_different_from_worse_in_markdown_and_latex(shapes, table_rows):
    out, _ = shapes
    markdown = (out / "tables.md").read_text()
    rows = table_rows(markdown, "test_error")
    column = rows["dataset"].index("random_forest / inhouse")
    worse, untested = rows["five_rows"][column], rows["one_row_holdout"][column]
    assert not worse.startswith(("*", "<u>")) and untested.startswith("*")
    assert rows["one_row_kfold"][column].startswith("<u>")
    tex = (out / "tables.tex").read_text()
    assert r"\textit{" in tex and r"\underline{" in tex
    assert "italic = untested" in markdown


def test_verdict_counts_are_read_from_the_verdicts(shapes, table_rows):
    out, found = shapes
    counts = table_rows((out / "tables.md").read_text(), "test_error: verdict counts")
    expected = found.reset_index().groupby("column")["verdict"].value_counts().unstack(
        fill_value=0)
    for column, row in counts.items():
        if column == "column":
            assert row == ["best", "tie", "worse", "untested"]
            continue
        assert [int(n) for n in row] == [int(expected.loc[column].get(v, 0))
                                         for v in ("best", "tie", "worse", "untested")]
    assert counts["random_forest / inhouse"] == ["1", "2", "2", "1"]


@pytest.mark.parametrize("preset", ["default", "tuned"])
def test_the_default_and_tuned_presets_run_the_resamples_a_verdict_needs(preset):
    """seeds x outer splits of the preset's cells >= MIN_RESAMPLES: their reports can reach a
    verdict on every cell that ran."""
    conf = OmegaConf.load(ROOT / "conf" / "sweep" / f"{preset}.yaml")
    seeds = len(str(conf.hydra.sweeper.params.seed).split(","))
    assert conf.eval.kind == "kfold"
    assert seeds * conf.eval.n_splits >= MIN_RESAMPLES
