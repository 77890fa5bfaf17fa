"""The reports' only access to MLflow: an experiment's runs, split values, curves and margins
as pandas DataFrames, and the `report` run that holds the figures."""

import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pandas as pd
from mlflow import MlflowClient

from experiments.analyses.findings import MARGINS_ARTIFACT
from experiments.store.uri import sqlite_path

RUN_TAGS = (
    "dataset",
    "method",
    "loss",
    "engine",
    "seed",
    "task",
    "status",
    "git_commit",
    "run_key",
)
ENCODING = "encoding"  # how the job encoded categorical features: native, ordinal, onehot
ENCODING_TAG, ENCODING_PARAM = "data.encoding", "dataset.categorical"
TARGET_TAG, PATH_TAG = "data.target", "data.path"  # a table's target column and file
READING_TAG = "data.reading"  # a file's reading settings (drop, sep, decimal)
NO_ENCODING = "none"  # a bundled or generated dataset: no categorical features to encode
SPLIT_PARAMS = ("eval.kind", "eval.test_size", "eval.n_splits")  # the outer splits' sizes
CELL_KEYS = ["dataset", "method", "engine", ENCODING]
REPORT_STATUS = "report"
TRIAL_STATUS = "trial"
SWEEP_STATUS = "sweep"
UNTUNED = "none"
LIBRARY_DEFAULTS = "@library"  # the method label of a reference run at its library's defaults


class ReportError(Exception):
    """A report cannot be built; the message is the one line shown to the user."""


def _all_pages(search: Callable, **kwargs) -> Iterator:
    """Every item of a paged MLflow search."""
    page_token = None
    while True:
        page = search(page_token=page_token, **kwargs)
        yield from page
        page_token = page.token
        if not page_token:
            return


def open_experiment(tracking_uri: str, name: str) -> tuple[MlflowClient, str]:
    """A client on the store and the id of experiment `name`, or a ReportError listing those that
    exist. A missing sqlite file is reported as an empty store instead of being created."""
    database = sqlite_path(tracking_uri)
    if database is not None and not database.is_file():
        raise ReportError(
            f"no MLflow experiment '{name}' in {tracking_uri}; existing: none (no such database)"
        )
    client = MlflowClient(tracking_uri=tracking_uri)
    experiment = client.get_experiment_by_name(name)
    if experiment is None:
        existing = sorted(e.name for e in _all_pages(client.search_experiments))
        raise ReportError(
            f"no MLflow experiment '{name}' in {tracking_uri}; "
            f"existing: {', '.join(existing) or 'none'}"
        )
    return client, experiment.experiment_id


def run_encoding(tags: dict[str, str], params: dict[str, str]) -> str:
    """The categorical encoding of a job: its tag data.encoding, else its param
    dataset.categorical (csv, openml and suite datasets), else NO_ENCODING."""
    return tags.get(ENCODING_TAG) or params.get(ENCODING_PARAM) or NO_ENCODING


def load_runs(client: MlflowClient, experiment_id: str) -> pd.DataFrame:
    """One row per job run (all statuses but the report's own runs, tag status=report, the
    sweeps' parent runs, status=sweep, and tuning trials, status=trial): run_id, start_time,
    its tags (MLflow's own `mlflow.*` tags left out), its `encoding` (run_encoding), the params
    of its outer splits' sizes (SPLIT_PARAMS; None if not logged) and its summary metrics
    (the per-split `split_*` histories left out). A tuned job's method reads
    `method+sampler` (gbt+tpe), so that it has a column of its own."""
    rows, tag_keys, metric_keys, method_params = [], set(), set(), {}
    for run in _all_pages(client.search_runs, experiment_ids=[experiment_id]):
        if run.data.tags.get("status") in (REPORT_STATUS, TRIAL_STATUS, SWEEP_STATUS) or (
                "trial" in run.data.tags):  # a failed trial: status failed  # fmt: skip
            continue
        tags = {k: v for k, v in run.data.tags.items() if not k.startswith("mlflow.")}
        metrics = {k: v for k, v in run.data.metrics.items() if not k.startswith("split_")}
        tag_keys |= tags.keys()
        metric_keys |= metrics.keys()
        start_time = pd.Timestamp(run.info.start_time, unit="ms", tz="UTC")
        encoding = run_encoding(tags, run.data.params)
        split_params = {key: run.data.params.get(key) for key in SPLIT_PARAMS}
        method_params[run.info.run_id] = {key: value for key, value in run.data.params.items()
                                          if key.startswith("method.") and key != "method.name"}
        rows.append({"run_id": run.info.run_id, "start_time": start_time, **tags,
                     ENCODING: encoding, **split_params, **metrics})  # fmt: skip
    extra_tags = sorted(tag_keys - set(RUN_TAGS))
    columns = ["run_id", "start_time", *RUN_TAGS, ENCODING, *extra_tags, *SPLIT_PARAMS,
               *sorted(metric_keys)]  # fmt: skip
    runs = pd.DataFrame(rows).reindex(columns=columns)
    if "tune" in runs.columns:
        tuned = runs["tune"].notna() & (runs["tune"] != UNTUNED)
        runs.loc[tuned, "method"] = runs["method"] + "+" + runs["tune"]
    if "defaults_from" in runs.columns:
        library = runs["defaults_from"] == "library"  # engine.defaults_from
        runs.loc[library, "method"] = runs["method"] + LIBRARY_DEFAULTS
    runs = split_methods(split_datasets(runs), pd.DataFrame.from_dict(method_params, "index"))
    return runs.sort_values([*CELL_KEYS, "seed", "start_time"], ignore_index=True)


def split_datasets(runs: pd.DataFrame) -> pd.DataFrame:
    """A dataset name whose runs read more than one target (tag data.target), file (tag
    data.path: two files of one stem in two sweeps) or reading of a file (tag data.reading:
    dataset.drop, sep, decimal) is that many datasets, each labelled `name [target]`,
    `name [file]` (relative to the files' common folder) or `name [drop=id]`: two datasets never
    share a row."""
    runs = runs.copy()
    for tag, shown in ((TARGET_TAG, lambda values: values), (PATH_TAG, relative_paths),
                       (READING_TAG, lambda values: values)):
        if tag not in runs.columns:
            continue
        several = runs.groupby("dataset")[tag].transform("nunique") > 1
        for name, group in runs[several].groupby("dataset"):
            runs.loc[group.index, "dataset"] = name + " [" + shown(group[tag]) + "]"
    return runs


def split_methods(runs: pd.DataFrame, params: pd.DataFrame) -> pd.DataFrame:
    """A method whose runs on one dataset were logged with more than one value of a method
    parameter (`params`: the method.* params by run_id; a sweep over method.max_depth=1,2,3) is
    that many methods there, each labelled `name [max_depth=1]` by the parameters that vary among
    the runs logging all of them: two configurations are never pooled as seeds of one cell
    (`method_option` reads the name back)."""
    runs = runs.copy()
    params = params.reindex(runs["run_id"]).set_axis(runs.index)
    for (_, name), group in runs.groupby(["dataset", "method"]):
        values = params.loc[group.index].dropna(how="all").dropna(axis=1)
        varying = [key for key in values.columns if values[key].nunique() > 1]
        if varying:
            shown = [key.removeprefix("method.") + "=" + values[key] for key in varying]
            labels = pd.concat(shown, axis=1).agg(", ".join, axis=1)
            runs.loc[labels.index, "method"] = name + " [" + labels + "]"
    return runs


def method_option(label: str) -> str:
    """The method option of a method label: `adaboost` of `adaboost [max_depth=2]`."""
    return label.split(" [")[0]


def relative_paths(paths: pd.Series) -> pd.Series:
    """Each path relative to the folder common to all (a/data.csv, b/data.csv)."""
    common = os.path.commonpath(list(paths.dropna().map(os.path.dirname)))
    return paths.map(lambda path: os.path.relpath(path, common), na_action="ignore")


LATEST_SWEEP = "latest"


def sweep_run_id(client: MlflowClient, experiment_id: str, sweep: str) -> str:
    """The run id of the experiment's sweep `sweep` (a sweep run's id, or `latest`: the one
    started last); raises ReportError naming the latest sweeps when there is no such sweep."""
    sweeps = client.search_runs([experiment_id], f"tags.status = '{SWEEP_STATUS}'",
                                order_by=["attributes.start_time DESC"])  # fmt: skip
    if sweep == LATEST_SWEEP and sweeps:
        return sweeps[0].info.run_id
    if any(run.info.run_id == sweep for run in sweeps):
        return sweep
    listed = ", ".join(f"{run.info.run_id} ({run.info.run_name})" for run in sweeps[:5])
    raise ReportError(f"no sweep '{sweep}' in this experiment; its latest sweeps: "
                      f"{listed or 'none'}")  # fmt: skip


def load_split_values(client: MlflowClient, runs: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Long table of `metric` per (run, split): dataset, method, engine, encoding, seed, run_id,
    split, value.

    Uses the `split_<metric>` history (step = split index); a run without one contributes its
    summary `metric` as split 0."""
    rows = []
    for run in runs.to_dict("records"):
        history = client.get_metric_history(run["run_id"], f"split_{metric}")
        cell = {key: run[key] for key in [*CELL_KEYS, "seed", "run_id"]}
        if history:
            rows += [{**cell, "split": m.step, "value": m.value} for m in history]
        elif pd.notna(run.get(metric)):
            rows.append({**cell, "split": 0, "value": run[metric]})
    return pd.DataFrame(rows, columns=[*CELL_KEYS, "seed", "run_id", "split", "value"])


def load_curves(client: MlflowClient, runs: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Long table of the stepped `metric` (a `curve_*` learning curve; step = rounds) of `runs`:
    dataset, method, engine, encoding, seed, rounds, value."""
    rows = []
    for run in runs.to_dict("records"):
        cell = {key: run[key] for key in [*CELL_KEYS, "seed"]}
        rows += [
            {**cell, "rounds": m.step, "value": m.value}
            for m in client.get_metric_history(run["run_id"], metric)
        ]
    return pd.DataFrame(rows, columns=[*CELL_KEYS, "seed", "rounds", "value"])


def load_params(client: MlflowClient, runs: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    """The logged params `names` (as strings; None where a run lacks one) of `runs`, indexed by
    run_id."""
    rows = {run_id: client.get_run(run_id).data.params for run_id in runs["run_id"]}
    return pd.DataFrame([{name: params.get(name) for name in names} for params in rows.values()],
                        index=pd.Index(list(rows), name="run_id"), columns=names)  # fmt: skip


def load_margins(client: MlflowClient, runs: pd.DataFrame) -> pd.DataFrame:
    """Long table (dataset, method, engine, encoding, seed, rounds, margin) of the runs that
    logged the margins artifact (empty if none did)."""
    frames = []
    with tempfile.TemporaryDirectory() as tmp:
        for run in runs.to_dict("records"):
            names = {Path(a.path).name for a in client.list_artifacts(run["run_id"])}
            if MARGINS_ARTIFACT not in names:
                continue
            path = client.download_artifacts(run["run_id"], MARGINS_ARTIFACT, tmp)
            margins = pd.read_csv(path)
            frames.append(margins.assign(**{key: run[key] for key in [*CELL_KEYS, "seed"]}))
    columns = [*CELL_KEYS, "seed", "rounds", "margin"]
    return pd.concat(frames)[columns] if frames else pd.DataFrame(columns=columns)


def log_report_run(client: MlflowClient, experiment_id: str, paths: list[Path]) -> str:
    """A new run named `report` (tag status=report, so the tables leave it out) holding `paths`
    as artifacts under `figures/`; returns its run id."""
    run = client.create_run(experiment_id, run_name="report", tags={"status": REPORT_STATUS})
    for path in paths:
        client.log_artifact(run.info.run_id, str(path), artifact_path="figures")
    client.set_terminated(run.info.run_id)
    return run.info.run_id


def load_trials(client: MlflowClient, experiment_id: str, runs: pd.DataFrame) -> pd.DataFrame:
    """Long table of the tuning trials of `runs` (their child runs, status=trial): dataset,
    method, engine, encoding, seed, run_id (the job's), outer_split, trial, metric
    (test_<tune metric>), inner and test (the trial's inner validation score and its models'
    outer test score), tiebreak (its inner tie-break metric, experiments.tuning.selection),
    seconds (its wall time, trial_seconds) and infeasible (values the engine could not run,
    resampled by the tuner); a failed trial has NaN scores and seconds (counted, never
    chosen)."""
    jobs = runs.set_index("run_id")
    rows = []
    trials = [run for status in (TRIAL_STATUS, "failed")
              for run in _all_pages(client.search_runs, experiment_ids=[experiment_id],
                                    filter_string=f"tags.status = '{status}'")
              if "trial" in run.data.tags]  # a failed trial has status failed  # fmt: skip
    for trial in trials:
        parent = trial.data.tags.get("mlflow.parentRunId")
        if parent not in jobs.index:
            continue
        metrics = trial.data.metrics
        inner = next((name for name in metrics if name.startswith("inner_")), None)
        tiebreak = next((name for name in metrics if name.startswith("tiebreak_inner_")), None)
        job = jobs.loc[parent]
        rows.append({**{key: job[key] for key in [*CELL_KEYS, "seed"]}, "run_id": parent,
                     "outer_split": int(trial.data.tags["outer_split"]),
                     "trial": int(trial.data.tags["trial"]),
                     "metric": inner and f"test_{inner.removeprefix('inner_')}",
                     "inner": metrics[inner] if inner else np.nan,
                     "test": metrics[inner.replace("inner_", "test_", 1)] if inner else np.nan,
                     "tiebreak": metrics[tiebreak] if tiebreak else np.nan,
                     "seconds": metrics.get("trial_seconds", np.nan),
                     "infeasible": "skip_reason" in trial.data.tags})  # fmt: skip
    columns = [*CELL_KEYS, "seed", "run_id", "outer_split", "trial", "metric", "inner", "test",
               "tiebreak", "seconds", "infeasible"]  # fmt: skip
    table = pd.DataFrame(rows, columns=columns)
    # a trial without scores (failed, infeasible) takes its job's metric from the job's others
    table["metric"] = table.groupby("run_id")["metric"].transform(lambda m: m.ffill().bfill())
    return table.dropna(subset=["metric"])
