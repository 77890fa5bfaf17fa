"""What a report's cells lack or replaced, one row each: failed jobs (with their error line),
unfinished ones, a failed rerun of a job whose earlier ok result the tables keep, results a rerun
replaced (an ok run of a run_key that has a later one, or of an earlier version of its dataset's
file), and split values the tables left out (`tables.row_resamples`), so that a reader of the
tables sees which cells hold fewer resamples, and why, in the report itself."""

import pandas as pd

from reports.tables import column_keys, column_label, latest_of_each_run_key, older_file

FAILED, UNFINISHED = "failed", "unfinished (running, or its process was killed)"
FAILED_RERUN = "failed on a rerun: the tables keep its earlier ok result"
REPLACED, OLDER_FILE = "replaced by a later run of its run_key", "an earlier version of its file"
FAILURE_COLUMNS = ["dataset", "column", "seed", "what", "detail"]


def failures(runs: pd.DataFrame) -> pd.DataFrame:
    """One row (FAILURE_COLUMNS) per failed or unfinished job run of `runs` without a later ok
    run of its run_key (FAILED_RERUN when an earlier one was ok), and per ok run the tables left
    out as replaced; detail: the error line (tag `error`) or the run's start time."""
    runs = runs.reindex(columns=[*runs.columns, *{"error", "run_key"} - set(runs.columns)])
    ok = runs[runs["status"] == "ok"]
    latest = latest_of_each_run_key(ok)
    latest_ok = latest.dropna(subset=["run_key"]).set_index("run_key")["start_time"]
    not_ok = runs[runs["status"].isna() | (runs["status"] == FAILED)]
    ok_before = pd.to_datetime(not_ok["run_key"].map(latest_ok.to_dict()), utc=True)
    unresolved = not_ok[~(ok_before > not_ok["start_time"])]
    what = unresolved["status"].fillna(UNFINISHED).where(ok_before[unresolved.index].isna(),
                                                         FAILED_RERUN)
    parts = [
        unresolved.assign(what=what, detail=unresolved["error"].astype(object).fillna("")),
        ok.drop(latest.index).assign(what=REPLACED),
        latest[older_file(latest)].assign(what=OLDER_FILE),
    ]
    rows = pd.concat(parts)
    rows["detail"] = rows["detail"].where(rows["detail"].notna(),
                                          "started " + rows["start_time"].astype(str))
    return _labelled(rows, column_keys(runs))


def left_out_values(left_out: pd.DataFrame, metric: str) -> pd.DataFrame:
    """One row (FAILURE_COLUMNS) per (dataset, column, seed, reason) of the split values
    `tables.row_resamples` left out of `metric`'s table, naming their splits."""
    keys = column_keys(left_out) if len(left_out) else ["method", "engine"]
    grouped = left_out.groupby(["dataset", *keys, "seed", "reason"], as_index=False)["split"]
    rows = grouped.agg(lambda splits: ", ".join(map(str, sorted(splits))))
    rows = rows.assign(what="left out of " + metric + ": " + rows["reason"],
                       detail="split " + rows["split"].astype(str))
    return _labelled(rows, keys)


def _labelled(rows: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """`rows` with their `column_label` of `keys`, in FAILURE_COLUMNS, sorted."""
    rows = rows.assign(column=[column_label(tuple(row))
                               for row in rows[keys].itertuples(index=False)])
    return rows.sort_values(["dataset", "column", "seed"])[FAILURE_COLUMNS].reset_index(drop=True)
