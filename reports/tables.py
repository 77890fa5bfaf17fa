"""Aggregate per-split metric values into tables: rows = datasets, columns = (method, engine),
or (method, engine, encoding) when some dataset ran with more than one encoding.

The categorical encoding (native, ordinal, onehot: `reports.runs.run_encoding`) is a key of every
grouping of the report, so that two encodings never share a cell, whatever the engines. When
some dataset of a frame ran with more than one, the encoding joins the columns of every table,
statistic and figure made from that frame (`gbt / inhouse / native` beside
`gbt / inhouse / ordinal` in the dataset's row), so that the paired tests, ranks,
verdicts and the CD diagram compare encodings as any two columns; a dataset without
categorical features (encoding `none`, `runs.NO_ENCODING`) then has `... / none` columns of its
own, its runs never copied under each encoding. Otherwise every dataset has a single encoding,
no cell can hold two, and the columns stay (method, engine); the datasets table names each
dataset's encodings. `column_keys` makes that choice from the frame it is given.
"""

import math
from dataclasses import dataclass

import pandas as pd

from experiments.environment import ENVIRONMENT_TAGS
from reports.runs import ENCODING, ReportError

# the metrics tabled per dataset (all lower is better), and a tuned study's own (tabled_metrics)
TABLE_METRICS = ("test_error", "test_logloss", "test_rmse")
ERROR_RATES = ("test_error",)  # shares of n_test rows: a value moves in steps of 1/n_test
TUNED_METRIC_PREFIX = "tune_best_inner_"  # a tuned job's metric tune_best_inner_<tune.metric>
TEST_TRAIN_RATIO = "test_train_ratio"  # n_test / n_train of a run's splits (a values column)
TEST_ROWS = "test_rows"  # n_test of a run's splits (a values column)
PAIR_KEYS = ["method", "engine"]
INHOUSE = "inhouse"


def column_label(column: tuple[str, ...]) -> str:
    """`method / engine` (`method / engine / encoding`), the header of a table's column."""
    return " / ".join(column)


def column_keys(frame: pd.DataFrame) -> list[str]:
    """The keys of a column of the tables of `frame` (runs or a long table of them): method and
    engine, and the encoding when some dataset of `frame` has more than one."""
    if ENCODING in frame.columns and frame.groupby("dataset")[ENCODING].nunique().gt(1).any():
        return [*PAIR_KEYS, ENCODING]
    return PAIR_KEYS


DATA_SHA256 = "data.sha256"  # a file dataset's content hash (experiments.data.datasets)
# how a reference engine's run departs from the method (tag of experiments.engines.spec.Built)
APPROXIMATION = "approximation"


def approximations(ok: pd.DataFrame, keys: list[str]) -> dict[tuple[str, ...], list[str]]:
    """Per column (a tuple of `keys`) whose ok runs carry an APPROXIMATION tag, its distinct
    notes, sorted."""
    if APPROXIMATION not in ok.columns:
        return {}
    tagged = ok.dropna(subset=[APPROXIMATION])
    return {tuple(column): sorted(set(group[APPROXIMATION]))
            for column, group in tagged.groupby(keys)}


def ok_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """Runs with status `ok`; of several ok runs with one run_key only the latest is kept, and
    of a file dataset only the runs of its latest content (tag data.sha256 of its latest ok run):
    an edited file's earlier results are never pooled with the new ones."""
    ok = latest_of_each_run_key(runs[runs["status"] == "ok"])
    return ok[~older_file(ok)]


def latest_of_each_run_key(ok: pd.DataFrame) -> pd.DataFrame:
    keyed = ok["run_key"].notna()
    latest = ok[keyed].sort_values("start_time").drop_duplicates("run_key", keep="last")
    return pd.concat([latest, ok[~keyed]]).sort_index()


def older_file(ok: pd.DataFrame) -> pd.Series:
    """True for the runs of a file dataset whose data.sha256 is not that of the dataset's latest
    ok run."""
    if DATA_SHA256 not in ok.columns:
        return pd.Series(False, index=ok.index)
    newest = ok.sort_values("start_time").groupby("dataset")[DATA_SHA256].last()
    return ok[DATA_SHA256].notna() & (ok[DATA_SHA256] != ok["dataset"].map(newest))


def left_out_line(runs: pd.DataFrame, ok: pd.DataFrame) -> str:
    """One line: how many runs the tables use and how many they leave out, by why."""
    reasons = runs["status"].fillna("unfinished (running, or its process was killed)")
    left = reasons[runs["status"] != "ok"].value_counts().sort_index()
    all_ok = runs[runs["status"] == "ok"]
    latest = latest_of_each_run_key(all_ok)
    repeated, older = len(all_ok) - len(latest), len(latest) - len(ok)
    parts = [f"{n} {reason}" for reason, n in left.items()]
    if repeated:
        parts.append(f"{repeated} ok runs of a run_key that has a later one")
    if older:
        parts.append(f"{older} ok runs of an earlier version of their dataset's file "
                     "(data.sha256)")
    return f"report: {len(ok)} ok runs in the tables; left out: {', '.join(parts) or 'none'}"


def mixed_environments_line(ok: pd.DataFrame) -> str | None:
    """A warning line when the runs come from more than one environment (the tags of
    experiments.environment.ENVIRONMENT_TAGS: lock file, CPU model, OS, Python), naming the tags
    that differ and their values; None when they all agree."""
    present = [tag for tag in ENVIRONMENT_TAGS if tag in ok.columns]
    differing = {tag: sorted(ok[tag].dropna().unique()) for tag in present
                 if ok[tag].nunique() > 1}  # fmt: skip
    if not differing:
        return None
    shown = "; ".join(f"{tag}: {', '.join(values)}" for tag, values in differing.items())
    n = len(ok[present].drop_duplicates())
    return (f"warning: the runs come from {n} environments ({shown}); "
            "their times and scores may not be comparable")


@dataclass(frozen=True)
class MetricTable:
    """One metric per cell: mean, sample std and number of values; rows = dataset, columns =
    (method, engine[, encoding]) (`column_keys`). A cell with no value is NaN (count 0). `values`
    is the long table the cells pool (dataset, method, engine, [encoding,] seed, split, value,
    and TEST_ROWS and TEST_TRAIN_RATIO when the runs say their split sizes), kept for the paired
    tests."""

    metric: str
    mean: pd.DataFrame
    std: pd.DataFrame
    count: pd.DataFrame
    values: pd.DataFrame

    @property
    def keys(self) -> list[str]:
        """The names of the column keys: method, engine[, encoding]."""
        return list(self.mean.columns.names)


def tabled_metrics(ok: pd.DataFrame) -> list[str]:
    """TABLE_METRICS, then test_<m> for each metric m a tuned job of `ok` minimized (its
    TUNED_METRIC_PREFIX<m> metric), among those some run of `ok` logged."""
    tuned = [f"test_{c.removeprefix(TUNED_METRIC_PREFIX)}" for c in ok.columns
             if c.startswith(TUNED_METRIC_PREFIX)]  # fmt: skip
    chosen = dict.fromkeys([*TABLE_METRICS, *sorted(tuned)])
    return [metric for metric in chosen if metric in ok.columns and ok[metric].notna().any()]


def check_one_run_per_split(values: pd.DataFrame, keys: list[str]) -> None:
    """ReportError naming the cell where two runs share a seed and a split: they differ in a
    setting the tables do not key by (a loss, another parameter, a file's runs logged before its
    target and reading were tagged), and pooling them as repeats would be a wrong number."""
    if not {"seed", "split"} <= set(values.columns):
        return  # a table given its values directly, without their runs' seeds and splits
    shared = values.duplicated(["dataset", *keys, "seed", "split"], keep=False)
    if not shared.any():
        return
    row = values[shared].iloc[0]
    column = " / ".join(str(row[key]) for key in keys)
    n = int((shared & (values[["dataset", *keys]] == row[["dataset", *keys]]).all(axis=1)).sum())
    raise ReportError(f"dataset {row['dataset']}, column {column}: {n} runs share seed "
                      f"{row['seed']} and split {row['split']}; they differ in a setting the "
                      "tables do not tell apart (a loss, a method parameter, or a file run "
                      "before its target and reading were tagged): report them apart with "
                      "--sweep, or from experiments of their own")


NAN_VALUE = "no value (NaN)"
EXTRA_RESAMPLE = "an extra resample: fewer than half of its row's cells have it"


def row_resamples(values: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """`values` split into the values the tables use and those they leave out, with a `reason`:
    a NaN value (NAN_VALUE), or a (seed, split) that fewer than half of its row's cells have
    (EXTRA_RESAMPLE: a column run on more seeds than the others), so that a row's cells are
    compared on the resamples most of them share and an extra seed of one column never makes
    the others look incomplete."""
    keys = column_keys(values)
    present = values.dropna(subset=["value"])
    cells = present.groupby("dataset")[keys].apply(lambda rows: len(rows.drop_duplicates()))
    having = present.groupby(["dataset", "seed", "split"])[keys[0]].transform("size")
    shared = having >= present["dataset"].map(cells) / 2
    kept = present[shared]
    left_out = pd.concat([values[values["value"].isna()].assign(reason=NAN_VALUE),
                          present[~shared].assign(reason=EXTRA_RESAMPLE)])
    return kept, left_out


def summarize(values: pd.DataFrame, metric: str) -> MetricTable:
    """Mean and sample standard deviation (ddof=1; NaN for a single value) of each cell, pooling
    all (seed, split) values of `values` (the long table of `runs.load_split_values`); a
    ReportError when two runs of one cell share a seed and split (see check_one_run_per_split)."""
    keys = column_keys(values)
    check_one_run_per_split(values, keys)
    stats = values.groupby(["dataset", *keys])["value"].agg(["mean", "std", "count"])
    wide = {name: stats[name].unstack(keys).sort_index(axis=1) for name in stats.columns}
    return MetricTable(
        metric=metric,
        mean=wide["mean"],
        std=wide["std"],
        count=wide["count"].fillna(0).astype(int),
        values=values,
    )


def split_sizes(kind: str | None, test_size: str | None, n_splits: str | None,
                rows: str | None, cap: str | None) -> tuple[float, float]:
    """(n_test, n_test / n_train) of a run's outer splits (experiments.evaluation.split_rows):
    k-fold n_test = rows / k; a holdout (and bias_variance's) n_test = ceil(test_size * rows) for a
    fraction (scikit-learn's ShuffleSplit), test_size rows for an integer; n_train = rows - n_test,
    at most `cap` (max_train_rows). Without rows, n_test is NaN and the ratio 1/(k - 1), or
    f / (1 - f) for a fraction f. NaN where the run lacks what its kind needs."""
    rows_known, capped = pd.notna(rows), pd.notna(cap)
    if kind == "kfold" and pd.notna(n_splits):
        k = int(n_splits)
        if not rows_known:
            return math.nan, (math.nan if capped else 1 / (k - 1))
        n_test = int(rows) / k
    elif pd.notna(kind) and pd.notna(test_size):
        size = float(test_size)
        if not rows_known:
            return math.nan, (size / (1 - size) if size < 1 and not capped else math.nan)
        n_test = math.ceil(size * int(rows)) if size < 1 else size
    else:
        return math.nan, math.nan
    n_train = int(rows) - n_test
    return n_test, n_test / (min(n_train, int(cap)) if capped else n_train)


SIZE_PARAMS = ["eval.kind", "eval.test_size", "eval.n_splits", "data.rows", "max_train_rows"]


def split_sizes_of_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """Per run (index run_id) its `split_sizes` as columns TEST_ROWS and TEST_TRAIN_RATIO, from
    its params eval.kind, eval.test_size, eval.n_splits (reports.runs.SPLIT_PARAMS) and its tags
    data.rows and max_train_rows."""
    sizes = [split_sizes(*row) for row in
             _with_columns(runs, SIZE_PARAMS)[SIZE_PARAMS].itertuples(index=False)]
    return pd.DataFrame(sizes, index=runs["run_id"], columns=[TEST_ROWS, TEST_TRAIN_RATIO],
                        dtype=float)


def _with_columns(runs: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """`runs` with the metric `columns` it lacks added as NaN (metrics no run logged)."""
    return runs.reindex(columns=[*runs.columns, *(c for c in columns if c not in runs.columns)])


def timing(runs: pd.DataFrame) -> pd.DataFrame:
    """Per column (method, engine[, encoding]): median fit_seconds and predict_seconds over all
    its ok runs (every dataset and seed), and for reference engines the median over common jobs
    (same method, loss, dataset, encoding, seed) of the in-house / reference time ratios (> 1:
    in-house is slower)."""
    timed = _with_columns(runs, ["fit_seconds", "predict_seconds"]).dropna(subset=["fit_seconds"])
    keys = column_keys(timed)
    table = timed.groupby(keys).agg(
        jobs=("fit_seconds", "size"),
        fit_seconds=("fit_seconds", "median"),
        predict_seconds=("predict_seconds", "median"),
    )
    job_keys = ["loss", "dataset", "seed", *(key for key in keys if key != "engine")]
    inhouse = timed[timed["engine"] == INHOUSE].set_index(job_keys)
    reference = timed[timed["engine"] != INHOUSE].set_index(job_keys)
    inhouse_seconds = inhouse[["fit_seconds", "predict_seconds"]].add_suffix("_inhouse")
    joined = reference.join(inhouse_seconds)
    for phase in ("fit", "predict"):
        joined[f"{phase}_ratio"] = joined[f"{phase}_seconds_inhouse"] / joined[f"{phase}_seconds"]
    ratios = joined.reset_index().groupby(keys)[["fit_ratio", "predict_ratio"]].median()
    return table.join(ratios)


def parity(runs: pd.DataFrame) -> pd.DataFrame:
    """Per column (method, engine != inhouse[, encoding]) with parity metrics: the largest
    parity_max_abs_diff and the mean parity_metric_diff over its ok runs (empty if no run logged
    them)."""
    runs = _with_columns(runs, ["parity_max_abs_diff", "parity_metric_diff"])
    logged = runs[(runs["engine"] != INHOUSE) & runs["parity_max_abs_diff"].notna()]
    return logged.groupby(column_keys(logged)).agg(
        runs=("parity_max_abs_diff", "size"),
        max_abs_diff=("parity_max_abs_diff", "max"),
        mean_metric_diff=("parity_metric_diff", "mean"),
    )
