"""A sweep's own MLflow run: the parent of its jobs' runs, so that the UI groups a sweep. It
holds the sweep's overrides and launcher, and at the end the counts of its jobs (ok, skipped,
failed, resumed, orphaned) and its wall time, which the sweep also prints as one line."""

import time
from collections import Counter

import mlflow
from mlflow import MlflowClient
from mlflow.entities import Metric
from omegaconf import DictConfig, OmegaConf

from experiments.store.liveness import identity_tags
from experiments.store.retry import retry_when_busy

SWEEP_STATUS = "sweep"
COUNTED = ("ok", "skipped", "failed", "resumed", "orphaned")


@retry_when_busy
def open_sweep_run(experiment_id: str, config: DictConfig, n_jobs: int) -> str:
    """Create the sweep's run (status tag `sweep`, host, pid and heartbeat as a job's run, so
    that the next sweep fails it when this process dies) with its overrides, launcher and job count;
    return its id, which every job takes as its parent (mlflow.parentRunId) and sweep_id."""
    overrides = " ".join(config.hydra.overrides.task)
    launcher = OmegaConf.select(config, "hydra.launcher._target_", default="basic")
    run = MlflowClient().create_run(
        experiment_id,
        run_name=f"sweep {time.strftime('%Y-%m-%d %H:%M:%S')}",
        tags={"status": SWEEP_STATUS, "launcher": launcher.rsplit(".", 1)[-1], **identity_tags()},
    )
    client = MlflowClient()
    client.log_param(run.info.run_id, "overrides", overrides[:6000] or "(none)")
    client.log_param(run.info.run_id, "n_jobs", n_jobs)
    return run.info.run_id


@retry_when_busy
def job_counts(experiment_id: str, sweep_run_id: str, n_jobs: int) -> Counter:
    """outcome_counts of the sweep's job runs; orphaned: runs whose process was gone (of
    earlier sweeps, or a killed attempt of this one), found and failed by this sweep."""
    runs = mlflow.search_runs(experiment_ids=[experiment_id],
                              filter_string=f"tags.sweep_id = '{sweep_run_id}'",
                              output_format="list")  # fmt: skip
    counts = outcome_counts(
        [(run.data.tags["run_key"], run.data.tags.get("status", "unfinished")) for run in runs],
        n_jobs,
    )
    orphans = mlflow.search_runs(experiment_ids=[experiment_id],
                                 filter_string=f"tags.orphan_found_by = '{sweep_run_id}'",
                                 output_format="list")  # fmt: skip
    counts["orphaned"] = len(orphans)
    return counts


OUTCOME_RANK = {"ok": 0, "skipped": 1, "resumed": 2, "failed": 3}  # best first


def outcome_counts(outcomes: list[tuple[str, str]], n_jobs: int) -> Counter:
    """How many jobs (run_keys) ended ok, skipped, failed, ...: a job with several outcomes (a
    launcher's retry after a killed attempt) counts by its best; resumed: the n_jobs without
    an outcome (they found a done run, or another sweep's claim)."""
    best: dict[str, str] = {}
    for key, status in outcomes:
        if OUTCOME_RANK.get(status, 9) < OUTCOME_RANK.get(best.get(key), 9):
            best[key] = status
    counts = Counter(best.values())
    counts["resumed"] += n_jobs - len(best)
    return counts


def summary_line(counts: Counter, n_jobs: int, seconds: float) -> str:
    """`sweep: 168 jobs in 152 s: 132 ok, 36 skipped, 0 failed, 0 resumed, 0 orphaned`."""
    parts = [f"{counts[name]} {name}" for name in COUNTED]
    parts += [f"{n} {name}" for name, n in counts.items() if name not in COUNTED and n]
    return f"sweep: {n_jobs} jobs in {seconds:.0f} s: {', '.join(parts)}"


@retry_when_busy
def close_sweep_run(sweep_run_id: str, counts: Counter, seconds: float) -> None:
    """Log the counts (jobs_<status>, every status of COUNTED, 0 included) and wall_seconds,
    and end the sweep's run (FAILED when a job failed)."""
    client = MlflowClient()
    now = int(time.time() * 1000)
    names = [*COUNTED, *(name for name in counts if name not in COUNTED)]
    metrics = [Metric(f"jobs_{name}", float(counts[name]), now, 0) for name in names]
    client.log_batch(sweep_run_id, metrics=[*metrics, Metric("wall_seconds", seconds, now, 0)])
    client.set_terminated(sweep_run_id, "FAILED" if counts["failed"] else "FINISHED")
