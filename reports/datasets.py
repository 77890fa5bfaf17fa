"""The datasets table, the first table of a benchmark paper: one row per dataset of the
experiment, from the data.* tags its runs logged (experiments.data.datasets.describe_dataset)."""

import pandas as pd

from reports.render import TextTable
from reports.runs import ENCODING, NO_ENCODING

COLUMNS = {  # tag -> header
    "data.source": "source",
    "task": "task",
    "data.rows": "rows",
    "data.numeric_features": "numeric",
    "data.categorical_features": "categorical",
    "data.missing_pct": "missing %",
    "data.classes": "classes",
    "data.minority_share": "minority share",
    "max_train_rows": "training rows cap",
}


def encodings(runs: pd.DataFrame) -> pd.Series | None:
    """Per dataset, the categorical encodings its runs used (`native, ordinal`; `-`: none);
    None when no run used one."""
    if ENCODING not in runs.columns or runs[ENCODING].eq(NO_ENCODING).all():
        return None
    used = runs.groupby("dataset")[ENCODING].agg(lambda e: sorted(set(e) - {NO_ENCODING}))
    return used.map(lambda names: ", ".join(names) or "-")


def datasets_table(runs: pd.DataFrame) -> TextTable | None:
    """Per dataset, the tags of its latest run (every run of a dataset describes the same
    data), and after its categorical features the encodings its runs used, if any did; None
    when no run logged the tags (runs older than them)."""
    if "data.rows" not in runs.columns or runs["data.rows"].isna().all():
        return None
    described = runs[runs["data.rows"].notna()].sort_values("start_time")
    latest = described.groupby("dataset").last()
    cells = latest.reindex(columns=list(COLUMNS)).rename(columns=COLUMNS)
    used = encodings(runs)
    if used is not None:
        cells.insert(cells.columns.get_loc("categorical") + 1, "encodings", used)
    cells = cells.astype(object).fillna("-")  # a column of no value is float NaN
    cells.index.name = "dataset"
    bold = pd.DataFrame(False, index=cells.index, columns=cells.columns)
    caption = ("The datasets of the experiment: source, task, rows, numeric and categorical "
               "features (and the encodings of the categorical features its runs used), share "
               "of missing feature values, classes and the minority class's share "
               "(classification), and the cap on each split's training rows, if any.")
    return TextTable("datasets", caption, cells.astype(str), bold)
