"""The table shape shared by the per-job analyses: one table per dataset, rows method / engine
(/ encoding, `reports.tables.column_keys`), `mean ± std` over seeds of each metric."""

from collections.abc import Callable

import pandas as pd

from reports.render import MISSING, TextTable, format_cell, row_decimals
from reports.tables import column_keys, column_label


def cell_statistics(runs: pd.DataFrame, metrics: list[str]) -> pd.DataFrame:
    """Mean and sample std (ddof=1) over runs of each metric per (dataset, method, engine[,
    encoding]); the columns are (statistic, metric) pairs; empty if no run has any of
    `metrics`."""
    present = [m for m in metrics if m in runs.columns and runs[m].notna().any()]
    if not present:
        return pd.DataFrame()
    logged = runs.dropna(subset=present, how="all")
    cells = ["dataset", *column_keys(logged)]
    return logged.groupby(cells)[present].agg(["mean", "std"]).swaplevel(axis=1)


Layout = Callable[[set[str]], tuple[dict[str, str], str]]  # metrics present -> columns, caption


def dataset_tables(
    stats: pd.DataFrame, title: str, layout: Layout, bold_lowest: bool
) -> list[TextTable]:
    """One TextTable per dataset: rows method / engine (/ encoding), `mean ± std` of each metric
    of `layout(the metrics present)`'s columns (metric -> header), under its caption."""
    tables = []
    for dataset, rows in stats.groupby(level="dataset"):
        rows = rows.droplevel("dataset")
        means = rows["mean"].dropna(axis=1, how="all")
        columns, caption = layout(set(means.columns))
        metrics = [m for m in columns if m in means.columns]
        decimals = row_decimals(means[metrics].stack())
        cells = pd.DataFrame(
            {
                columns[m]: [
                    format_cell(mean, std, decimals)
                    for mean, std in zip(means[m], rows["std"][m], strict=True)
                ]
                for m in metrics
            },
            index=pd.Index([column_label(row) for row in means.index],
                           name=" / ".join(means.index.names)),
        )
        lowest = means[metrics].eq(means[metrics].min(axis=0), axis=1) & bold_lowest
        bold = pd.DataFrame(lowest.to_numpy(), index=cells.index, columns=cells.columns)
        bold &= cells != MISSING
        tables.append(TextTable(f"{title}: {dataset}", caption, cells, bold))
    return tables
