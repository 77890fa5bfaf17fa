"""A sweep's runs after one of its joblib workers died (SIGKILL, the out-of-memory killer): loky
then raises TerminatedWorkerError for the whole batch and kills the batch's other workers, so
their jobs' runs stay RUNNING with no process behind them. The lab's sweeper fails those runs as
orphaned (experiments.store.liveness), launches the batch again, and if a worker dies again records
the batch's unfinished jobs as failed (hydra_plugins/lab_sweeper)."""

import time

import mlflow
from mlflow import MlflowClient
from omegaconf import DictConfig

from experiments.store import tracking
from experiments.store.liveness import fail_orphans, orphan_reason
from experiments.store.retry import retry_when_busy

REAP_SECONDS = 10.0  # loky kills the pool's other workers after it raised: wait for them


@retry_when_busy
def sweep_experiment(sweep_id: str) -> str:
    """The experiment of the sweep's own run (and of its jobs' runs)."""
    return MlflowClient().get_run(sweep_id).info.experiment_id


@retry_when_busy
def sweep_runs(experiment_id: str, sweep_id: str, condition: str = "") -> list:
    """The job runs of this sweep (tag sweep_id), with an extra filter `and ...` if given."""
    return mlflow.search_runs(experiment_ids=[experiment_id],
                              filter_string=f"tags.sweep_id = '{sweep_id}'{condition}",
                              output_format="list")  # fmt: skip


def fail_dead_runs(experiment_id: str, sweep_id: str) -> list[str]:
    """Fail as orphaned (liveness.fail_orphans, found by the sweep) every RUNNING run of the
    sweep whose process is gone, once loky has reaped it (at most REAP_SECONDS); return the
    pids of those runs."""
    running = sweep_runs(experiment_id, sweep_id, " and attributes.status = 'RUNNING'")
    deadline = time.monotonic() + REAP_SECONDS
    while time.monotonic() < deadline and any(orphan_reason(run.data.tags) is None
                                              for run in running):  # fmt: skip
        time.sleep(0.1)
    dead = [run for run in running if orphan_reason(run.data.tags) is not None]
    for key in {run.data.tags["run_key"] for run in dead}:
        fail_orphans(experiment_id, key, sweep_id)
    return [run.data.tags.get("pid", "?") for run in dead]


def job_outcome(experiment_id: str, sweep_id: str, cfg: DictConfig) -> str | None:
    """How the job of this (hydra-less) config ended in the sweep: the status of its run of
    the sweep that was not orphaned (ok, skipped, failed), `resumed` when resume finds an ok or
    skipped run of its run_key anywhere, None when it has not ended."""
    key = tracking.run_key(cfg)
    runs = sweep_runs(experiment_id, sweep_id, f" and tags.run_key = '{key}'")
    ended = [run.data.tags.get("status") for run in runs
             if run.info.status != "RUNNING" and "orphan_found_by" not in run.data.tags]
    if ended:
        return ended[0]  # the latest: MLflow lists runs newest first
    if cfg.resume and tracking.done_status(experiment_id, key) is not None:
        return "resumed"
    return None


def record_failed(experiment_id: str, sweep_id: str, name: str, key: str, error: str) -> None:
    """A FAILED run (status failed, tag error) of the sweep for a job of this run_key that never
    ended, so that the summary counts it and the next sweep runs it again."""
    tags = {"run_key": key, "mlflow.parentRunId": sweep_id, "sweep_id": sweep_id,
            "status": "failed", "error": error}  # fmt: skip
    client = MlflowClient()
    run = retry_when_busy(client.create_run)(experiment_id, run_name=name, tags=tags)
    retry_when_busy(client.set_terminated)(run.info.run_id, "FAILED")
