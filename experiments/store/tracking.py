"""MLflow bookkeeping: the store, a job's identity (run_key) and what a run logs."""

import hashlib
import json
import os
import subprocess
import time
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache, partial
from typing import Any

import mlflow
import numpy as np
import pandas as pd
from mlflow import MlflowClient
from mlflow.data.code_dataset_source import CodeDatasetSource
from mlflow.entities import Metric, Param, RunStatus
from omegaconf import DictConfig, OmegaConf
from sklearn.base import BaseEstimator

from experiments.configs import EngineDefaults, method_key
from experiments.data.suite_cache import is_cached
from experiments.data.table_files import READER_VERSION, data_sha256
from experiments.environment import environment_tags
from experiments.paths import PROJECT_ROOT
from experiments.store.claims import beat_claim
from experiments.store.liveness import beat_run, heartbeat, identity_tags
from experiments.store.retry import retry_when_busy
from experiments.store.uri import sqlite_creation_lock, sqlite_path, tracking_uri
from experiments.tuning.selection import tiebreak_metric

SWEEP_RUN_ENV = "EXPERIMENTS_SWEEP_RUN"  # the sweep's parent run id, set for its jobs
ERROR_MAX_CHARS = 500
BEST_PARAMS_ARTIFACT = "best_params.json"


@retry_when_busy
def open_experiment(cfg: DictConfig) -> str:
    """Point MLflow at the store of the `mlflow` config node and return the id of its experiment,
    created if needed; a sqlite store keeps its artifacts beside it in mlartifacts/<name>."""
    uri = tracking_uri(cfg.tracking_uri)
    mlflow.set_tracking_uri(uri)
    with sqlite_creation_lock(uri):
        experiment = mlflow.get_experiment_by_name(cfg.experiment_name)
        if experiment is not None:
            return experiment.experiment_id
        database = sqlite_path(uri)
        artifacts = None
        if database is not None:
            artifacts = (database.parent / "mlartifacts" / cfg.experiment_name).as_uri()
        return mlflow.create_experiment(cfg.experiment_name, artifact_location=artifacts)


TRACKING_KEYS = ("mlflow", "resume")


def job_config(cfg: DictConfig) -> dict[str, Any]:
    """The resolved job config without the tracking settings (`mlflow`, `resume`), the suite and
    the study (its dataset's entry is interpolated into `dataset`); a tuned job keeps `tune` and its
    method's search space, an untuned one neither (so that its run_key is the one it had before
    tuning existed). A dataset file's sha256 and the reader's version join its dataset: an
    edited file, or one the lab now reads otherwise, is a new job; so
    does `uncached` for a suite dataset missing from the cache, so that the job skipped for it
    runs once the data is fetched. The lab's defaults (engine.defaults_from=lab) and no trial
    limit (tune.trial_seconds=null) leave no trace, so that a run_key is the one it had before
    those keys existed."""
    container = OmegaConf.to_container(cfg, resolve=True, enum_to_str=True)
    job = {
        key: value
        for key, value in container.items()
        if key not in (*TRACKING_KEYS, "tune", "search_space", "suite", "study")
    }
    if cfg.dataset.get("loader") == "csv":
        job["dataset"] |= {"sha256": data_sha256(cfg.dataset.path), "reader": READER_VERSION}
    if cfg.dataset.get("loader") == "suite" and not is_cached(cfg.dataset.suite, cfg.dataset.name,
                                                               cfg.dataset.cache):  # fmt: skip
        job["dataset"]["uncached"] = True
    if job["engine"].get("defaults_from") == "lab":
        del job["engine"]["defaults_from"]
    if cfg.tune.name != "none":
        job["tune"] = {key: value for key, value in container["tune"].items()
                       if not (key == "trial_seconds" and value is None)}
        job["search_space"] = {method_key(cfg.method): container["search_space"][
            method_key(cfg.method)]}
    return job


def job_name(cfg: DictConfig) -> str:
    """dataset/method/loss/engine seed=N: how a job is named in the sweep's log lines and run
    names; a table's encoding follows (categorical=native), so two encodings never look alike."""
    parts = (cfg.dataset.name, cfg.method.name, cfg.loss.name, cfg.engine.name)
    encoding = cfg.dataset.get("categorical")
    suffix = f" categorical={encoding.value}" if encoding is not None else ""
    if cfg.engine.get("defaults_from", EngineDefaults.lab) is EngineDefaults.library:
        suffix += " defaults_from=library"
    return f"{'/'.join(parts)} seed={cfg.seed}{suffix}"


def run_key(cfg: DictConfig) -> str:
    """sha256 of the job config as sorted JSON: equal for two jobs that compute the same thing."""
    text = json.dumps(job_config(cfg), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


DONE_STATUSES = ("ok", "skipped")


@retry_when_busy
def done_status(experiment_id: str, key: str) -> str | None:
    """The status of a run with this run_key that resume treats as done (ok, else skipped: a
    skipped job is skipped again for the same reason), or None when the job must run."""
    runs = mlflow.search_runs(
        experiment_ids=[experiment_id],
        filter_string=f"tags.run_key = '{key}'",
        output_format="list",
    )
    statuses = {run.data.tags.get("status") for run in runs}
    return next((status for status in DONE_STATUSES if status in statuses), None)


# the job's run from its start until the store took its end (MLflow forgets its active run
# before it writes the end, so a store lost in end_run leaves no active run to ask)
UNENDED_JOB_RUN: ContextVar[str | None] = ContextVar("unended_job_run", default=None)


@contextmanager
def job_run(experiment_id: str, name: str, key: str, claim: str | None) -> Iterator[None]:
    """mlflow.start_run/end_run, retried when the store is busy, named `name`, tagged with its
    run_key, host and pid (and, in a sweep, as a child of the sweep's run), with a heartbeat
    of the run and of the job's claim while it runs; a job interrupted by the user
    (KeyboardInterrupt, SIGINT) is marked failed, so that resume runs it again."""
    tags = {"run_key": key, **identity_tags()}
    sweep = os.environ.get(SWEEP_RUN_ENV)
    if sweep:
        tags |= {"mlflow.parentRunId": sweep, "sweep_id": sweep}
    run = retry_when_busy(mlflow.start_run)(experiment_id=experiment_id, run_name=name, tags=tags)
    unended = UNENDED_JOB_RUN.set(run.info.run_id)
    beats = [beat_run(run.info.run_id), *([partial(beat_claim, claim)] if claim else [])]
    with heartbeat(*beats):
        try:
            yield
        except KeyboardInterrupt as interrupt:
            mark_failed(interrupt)
            retry_when_busy(mlflow.end_run)(RunStatus.to_string(RunStatus.KILLED))
            raise
    retry_when_busy(mlflow.end_run)()
    UNENDED_JOB_RUN.reset(unended)


def leave_active_run() -> str | None:
    """End the active run, if any, without needing the store; return the id of the job's run
    whose end the store did not take (None: no run was started, as far as the job knows)."""
    if mlflow.active_run() is not None:
        try:
            mlflow.end_run(RunStatus.to_string(RunStatus.FAILED))
        except Exception:  # noqa: BLE001 - the store is unreachable: the journal holds the end
            pass
    run_id = UNENDED_JOB_RUN.get()
    UNENDED_JOB_RUN.set(None)
    return run_id


@lru_cache(maxsize=1)
def git_commit() -> str:
    """HEAD of the project's git repository, "unknown" outside one or before its first commit."""
    try:
        result = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=PROJECT_ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return result.stdout.strip()


def flatten(tree: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """{"a": {"b": 1}} -> {"a.b": 1}."""
    flat = {}
    for key, value in tree.items():
        if isinstance(value, dict):
            flat.update(flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


@retry_when_busy
def log_job(cfg: DictConfig) -> None:
    """Tags that identify the job and its environment (experiments.environment), the job config
    (and the tracking settings) as flattened params, config.yaml as an artifact."""
    tags = {
        "dataset": cfg.dataset.name,
        "method": cfg.method.name,
        "loss": cfg.loss.name,
        "engine": cfg.engine.name,
        "seed": cfg.seed,
        "task": cfg.dataset.task.value,
        "tune": cfg.tune.name,
        "defaults_from": cfg.engine.defaults_from.value,
        "git_commit": git_commit(),
    }
    mlflow.set_tags({**tags, **environment_tags()})
    container = OmegaConf.to_container(cfg, resolve=True, enum_to_str=True)
    params = {**job_config(cfg), **{name: container[name] for name in TRACKING_KEYS}}
    mlflow.log_params(flatten(params))
    mlflow.log_text(OmegaConf.to_yaml(cfg, resolve=True), "config.yaml")


def log_scores(scores: list[dict[str, float]], peak_rss_mb: float) -> dict[str, float]:
    """Log each split's metrics as split_<metric> at step = split index, their mean as <metric>,
    and the job's peak resident memory, in one batch; return the means."""
    means = {name: float(np.mean([split[name] for split in scores])) for name in scores[0]}
    now = int(time.time() * 1000)
    points = [
        Metric(f"split_{name}", value, now, step)
        for step, split_scores in enumerate(scores)
        for name, value in split_scores.items()
    ]
    points += [Metric(name, value, now, 0) for name, value in means.items()]
    log_batch(points + [Metric("peak_rss_mb", peak_rss_mb, now, 0)])
    return means


@retry_when_busy
def log_estimator(estimator: BaseEstimator, approximation: str | None) -> None:
    """Tag `estimator` (the class that runs the job) and, for a reference that only
    approximates the method config, `approximation` (how)."""
    model = type(estimator)
    tags = {"estimator": f"{model.__module__}.{model.__qualname__}"}
    if approximation:
        tags["approximation"] = approximation
    mlflow.set_tags(tags)


def log_curve(name: str, curve: dict[int, float]) -> None:
    """A learning curve as the stepped metric `name`, step = number of rounds (one batch)."""
    now = int(time.time() * 1000)
    log_batch([Metric(name, value, now, step) for step, value in curve.items()])


@retry_when_busy
def log_metrics(metrics: dict[str, float]) -> None:
    """Metrics of the active run at step 0, in one transaction."""
    mlflow.log_metrics(metrics)


@retry_when_busy
def log_tables(tables: dict[str, pd.DataFrame]) -> None:
    """Each table as a CSV artifact named by its key (margins.csv, ...)."""
    for name, table in tables.items():
        mlflow.log_text(table.to_csv(index=False), name)


@retry_when_busy
def log_batch(metrics: list[Metric]) -> None:
    """Metrics of the active run, one transaction per 1000 (MLflow's batch limit)."""
    MlflowClient().log_batch(mlflow.active_run().info.run_id, metrics=metrics)


@retry_when_busy
def mark(status: str, **tags: str) -> str:
    """Tag the active run with its final status (and e.g. a skip_reason); return the status."""
    mlflow.set_tags({"status": status, **tags})
    return status


def error_line(error: BaseException) -> str:
    """`Type: first line of the message`, at most ERROR_MAX_CHARS: the tag `error` of a run."""
    lines = str(error).strip().splitlines()
    text = f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__
    return text[:ERROR_MAX_CHARS]


def mark_failed(error: BaseException) -> str:
    """Status failed, error_line(error) as tag `error`, the traceback as traceback.txt."""
    retry_when_busy(mlflow.log_text)(traceback.format_exc(), "traceback.txt")
    return mark("failed", error=error_line(error))


def log_trials(job_name: str, split_index: int, metric: str, trials: list) -> None:
    """Each trial (tuning.search.TrialRecord) of an outer split as a child run of the active
    job run (tag mlflow.parentRunId, status trial; trial 0, the default configuration, tagged
    default=true): its parameters, inner_<metric>, tiebreak_inner_<other metric> (the
    tie-break of tuning.selection.selection_key), test_<metric> of its models on the outer test
    rows, and trial_seconds. A trial the engine cannot run on this data has tag skip_reason and
    no metrics; one that raised (or was stopped at tune.trial_seconds) has status failed, tag
    error, only trial_seconds, and MLflow run status FAILED (its tag `trial` tells it from a
    job)."""
    parent = mlflow.active_run().info
    for trial in trials:
        _log_trial(parent, f"{job_name} trial={trial.number} split={split_index}",
                   split_index, metric, trial)


@retry_when_busy
def _log_trial(parent, name: str, split_index: int, metric: str, trial) -> None:
    client = MlflowClient()
    tags = {"mlflow.parentRunId": parent.run_id, "status": "failed" if trial.error else "trial",
            "trial": str(trial.number), "outer_split": str(split_index)}
    if trial.default:
        tags["default"] = "true"
    if trial.infeasible:
        tags["skip_reason"] = trial.infeasible
    if trial.error:
        tags["error"] = trial.error
    run = client.create_run(parent.experiment_id, tags=tags, run_name=name)
    metrics = {"trial_seconds": trial.seconds} if trial.error else {}
    if trial.scored:
        metrics = {f"inner_{metric}": trial.inner_score,
                   f"tiebreak_inner_{tiebreak_metric(metric)}": trial.inner_tiebreak,
                   f"test_{metric}": trial.outer_test_score, "trial_seconds": trial.seconds}
    now = int(time.time() * 1000)
    client.log_batch(
        run.info.run_id,
        metrics=[Metric(key, value, now, 0) for key, value in metrics.items()],
        params=[Param(key, str(value)) for key, value in trial.params.items()],
    )
    client.set_terminated(run.info.run_id, "FAILED" if trial.error else "FINISHED")


@retry_when_busy
def log_best_params(best_params: list[dict]) -> None:
    """The first outer split's chosen parameters as params best.<name>, every split's in the
    artifact best_params.json."""
    mlflow.log_params({f"best.{name}": value for name, value in best_params[0].items()})
    mlflow.log_text(json.dumps(best_params, indent=1), BEST_PARAMS_ARTIFACT)


@retry_when_busy
def tag_row_cap(max_train_rows: int) -> None:
    """Tag max_train_rows: each split's training rows were subsampled to at most this many."""
    mlflow.set_tag("max_train_rows", str(max_train_rows))


@retry_when_busy
def log_dataset(cfg: DictConfig, X: np.ndarray, y: np.ndarray, description: dict) -> None:
    """The job's data as an MLflow dataset input (name, digest of the arrays, source: the lab's
    loader and the dataset's settings, a file's path among them), for the UI's dataset column,
    and its `description` tags (data.rows, ...: experiments.data.datasets.describe_dataset)."""
    mlflow.set_tags(description)
    settings = OmegaConf.to_container(cfg, resolve=True, enum_to_str=True)
    loader = cfg.get("loader", cfg.name)
    source = CodeDatasetSource({"loader": f"experiments.data.datasets:{loader}", **settings})
    dataset = mlflow.data.from_numpy(X, targets=y, name=cfg.name, source=source)
    mlflow.log_input(dataset, context="job")
