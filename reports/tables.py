"""Aggregate per-split metric values into tables: rows = datasets, columns = (method, engine)."""

from dataclasses import dataclass

import pandas as pd

from reports.runs import CELL_KEYS

PRIMARY_METRICS = ("test_error", "test_rmse")
PAIR_KEYS = ["method", "engine"]


def ok_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """Runs with status `ok`; of several ok runs with one run_key only the latest is kept."""
    ok = runs[runs["status"] == "ok"]
    keyed = ok["run_key"].notna()
    latest = ok[keyed].sort_values("start_time").drop_duplicates("run_key", keep="last")
    return pd.concat([latest, ok[~keyed]]).sort_index()


@dataclass(frozen=True)
class MetricTable:
    """One metric per cell: mean, sample std and number of values; rows = dataset, columns =
    (method, engine). A cell with no value is NaN (count 0)."""

    metric: str
    mean: pd.DataFrame
    std: pd.DataFrame
    count: pd.DataFrame

    @property
    def best(self) -> pd.DataFrame:
        """True at the lowest mean of each row, every cell of a tie (all primary metrics are
        lower-is-better)."""
        return self.mean.eq(self.mean.min(axis=1), axis=0)


def summarize(values: pd.DataFrame, metric: str) -> MetricTable:
    """Mean and sample standard deviation (ddof=1; NaN for a single value) of each cell, pooling
    all (seed, split) values of `values` (the long table of `runs.load_split_values`)."""
    stats = values.groupby(CELL_KEYS)["value"].agg(["mean", "std", "count"])
    wide = {name: stats[name].unstack(PAIR_KEYS).sort_index(axis=1) for name in stats.columns}
    return MetricTable(
        metric=metric,
        mean=wide["mean"],
        std=wide["std"],
        count=wide["count"].fillna(0).astype(int),
    )
