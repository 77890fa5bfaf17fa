"""The runs a report's cells lack or replaced, one row each: failed jobs (with their error line),
unfinished ones, and results a rerun replaced (an ok run of a run_key that has a later one, or of
an earlier version of its dataset's file), so that a reader of the tables sees which cells hold
fewer resamples, and why, in the report itself."""

import pandas as pd

from reports.tables import column_keys, column_label, latest_of_each_run_key, older_file

FAILED, UNFINISHED = "failed", "unfinished (running, or its process was killed)"
REPLACED, OLDER_FILE = "replaced by a later run of its run_key", "an earlier version of its file"
FAILURE_COLUMNS = ["dataset", "column", "seed", "what", "detail"]


def failures(runs: pd.DataFrame) -> pd.DataFrame:
    """One row (FAILURE_COLUMNS) per failed or unfinished job run of `runs` whose run_key has no
    later ok run, and per ok run the tables left out as replaced; detail: the error line (tag
    `error`) or the run's start time."""
    runs = runs.reindex(columns=[*runs.columns, *{"error", "run_key"} - set(runs.columns)])
    ok = runs[runs["status"] == "ok"]
    latest = latest_of_each_run_key(ok)
    rerun_ok = set(latest["run_key"].dropna())
    not_ok = runs[runs["status"].isna() | (runs["status"] == FAILED)]
    unresolved = not_ok[~not_ok["run_key"].isin(rerun_ok)]
    parts = [
        unresolved.assign(what=unresolved["status"].fillna(UNFINISHED),
                          detail=unresolved["error"].fillna("")),
        ok.drop(latest.index).assign(what=REPLACED),
        latest[older_file(latest)].assign(what=OLDER_FILE),
    ]
    keys = column_keys(runs)
    rows = pd.concat(parts)
    rows["detail"] = rows["detail"].where(rows["detail"].notna(),
                                          "started " + rows["start_time"].astype(str))
    rows["column"] = [column_label(tuple(row)) for row in rows[keys].itertuples(index=False)]
    return rows.sort_values(["dataset", "column", "seed"])[FAILURE_COLUMNS].reset_index(drop=True)
