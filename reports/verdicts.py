"""Per-dataset verdicts of a metric table, the one source of its marks, its verdict counts and
`verdicts.csv`: per (dataset, column) `best` (the lowest mean among the cells with every resample
of their row), `tie` or `worse` (not / significantly worse than that cell: `stats.paired_p`,
Holm-adjusted over the row's tested cells), or `untested` (a cell lacking a resample of its row,
or one the test cannot judge: fewer than `stats.MIN_RESAMPLES` pairs, unknown split sizes)."""

import math

import pandas as pd

from reports.stats import ALPHA, holm, paired_p, resample_counts
from reports.tables import MetricTable, column_label

BEST, TIE, WORSE, UNTESTED = "best", "tie", "worse", "untested"
VERDICTS = (BEST, TIE, WORSE, UNTESTED)
CSV_COLUMNS = ["metric", "dataset", "column", "n", "mean", "verdict", "p"]
# a verdict row also keeps its column's keys and its row's number of resamples (for the tables)
COLUMN_KEY, RESAMPLES = "column_key", "resamples"


def row_verdicts(table: MetricTable, dataset: str, alpha: float = ALPHA) -> list[dict]:
    """The verdict rows of `dataset`'s cells that have a value (CSV_COLUMNS, COLUMN_KEY,
    RESAMPLES); p is the Holm-adjusted p against the best cell (NaN for the best and untested
    cells)."""
    count, resamples = resample_counts(table)
    means, counts, full = table.mean.loc[dataset], count.loc[dataset], resamples[dataset]
    present = [column for column in means.index if counts[column] > 0]
    complete = [column for column in present if counts[column] == full]
    best_mean = min((means[column] for column in complete), default=math.nan)
    best = next((column for column in complete if means[column] == best_mean), None)
    tested = [column for column in complete if means[column] != best_mean]
    adjusted = dict(zip(tested, holm([paired_p(table, dataset, column, best)
                                      for column in tested]), strict=True))  # fmt: skip
    rows = []
    for column in present:
        p = adjusted.get(column, math.nan)
        if column in complete and means[column] == best_mean:
            verdict = BEST
        elif math.isnan(p):
            verdict = UNTESTED
        else:
            verdict = WORSE if p < alpha else TIE
        rows.append({"metric": table.metric, "dataset": dataset, "column": column_label(column),
                     "n": int(counts[column]), "mean": float(means[column]),
                     "verdict": verdict, "p": p, COLUMN_KEY: column, RESAMPLES: int(full)})
    return rows


def verdicts(table: MetricTable, alpha: float = ALPHA) -> pd.DataFrame:
    """`row_verdicts` of every dataset of `table`, one frame."""
    rows = [row for dataset in table.mean.index for row in row_verdicts(table, dataset, alpha)]
    return pd.DataFrame(rows, columns=[*CSV_COLUMNS, COLUMN_KEY, RESAMPLES])


def verdict_grid(found: pd.DataFrame, table: MetricTable, field: str) -> pd.DataFrame:
    """`field` of the verdict rows `found` (of `table`) laid out as the table's cells (datasets x
    column keys); NaN where a cell has no value."""
    grid = pd.DataFrame(index=table.mean.index, columns=table.mean.columns, dtype=object)
    for row in found.itertuples(index=False):
        grid.loc[row.dataset, getattr(row, COLUMN_KEY)] = getattr(row, field)
    return grid


def verdict_counts(found: pd.DataFrame) -> pd.DataFrame:
    """Per column label, how many datasets gave it each verdict (columns VERDICTS), in the order
    the columns first appear."""
    counts = pd.crosstab(found["column"], found["verdict"]).reindex(columns=list(VERDICTS),
                                                                    fill_value=0)
    return counts.reindex(found["column"].drop_duplicates())


def write_csv(found: list[pd.DataFrame], path) -> None:
    """The verdict rows of every table into `path` (CSV_COLUMNS only)."""
    rows = pd.concat(found, ignore_index=True) if found else pd.DataFrame(columns=CSV_COLUMNS)
    rows[CSV_COLUMNS].to_csv(path, index=False)
