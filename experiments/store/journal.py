"""A sweep's journal: each job's outcome, one JSON line per job in `<journal dir>/<sweep run
id>.jsonl` (the directory: `mlflow.journal_dir`, beside Hydra's multirun/ folders), so that an
outcome the store could not take is not lost.

When the store is unreachable longer than the client's retries, a job cannot record its end:
its outcome (failed, with the error) stays in the journal as unrecorded, the sweep goes on and
ends with its summary line counted from the journal. The next sweep (or job) of the same store
replays the unrecorded lines first: the runs get their status and error tags and end FAILED,
the sweep's run its counts; resume then runs those jobs again. A journal whose lines all
reached the store is deleted at the sweep's end.
"""

import fcntl
import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

from mlflow import MlflowClient
from mlflow.entities import Metric

from experiments.store.sweep_record import outcome_counts

JOURNAL_ENV = "EXPERIMENTS_JOURNAL"  # the sweep's journal file, set for its jobs
SINGLE_JOBS = "single-jobs.jsonl"


def journal_file(journal_dir: str, sweep_id: str | None) -> Path:
    """The sweep's journal (JOURNAL_ENV when set by the sweep), else the single jobs' one."""
    if os.environ.get(JOURNAL_ENV):
        return Path(os.environ[JOURNAL_ENV])
    name = f"{sweep_id}.jsonl" if sweep_id else SINGLE_JOBS
    return Path(journal_dir).resolve() / name


def append(path: Path, entry: dict[str, Any]) -> None:
    """Add one line, under an exclusive lock (the sweep's workers share the file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as journal:
        fcntl.flock(journal, fcntl.LOCK_EX)
        journal.write(json.dumps(entry) + "\n")


def entries(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    with open(path, encoding="utf-8") as journal:
        return [json.loads(line) for line in journal if line.strip()]


def record_job(path: Path, uri: str, run_key: str, status: str, run_id: str | None,
               error: str | None = None) -> None:  # fmt: skip
    """A job's outcome; `error` set: the store did not take it (replay tags and ends the run)."""
    append(path, {"kind": "job", "tracking_uri": uri, "run_key": run_key, "status": status,
                  "run_id": run_id, "error": error, "recorded": error is None})  # fmt: skip


def record_sweep_end(path: Path, uri: str, run_id: str, counts: Counter, seconds: float) -> None:
    """The sweep's counts, which the store did not take."""
    append(path, {"kind": "sweep", "tracking_uri": uri, "run_id": run_id, "recorded": False,
                  "counts": dict(counts), "seconds": seconds})  # fmt: skip


def job_counts(path: Path, n_jobs: int) -> Counter:
    """sweep_record.outcome_counts of the jobs the journal lists."""
    jobs = [entry for entry in entries(path) if entry["kind"] == "job"]
    return outcome_counts([(entry["run_key"], entry["status"]) for entry in jobs], n_jobs)


def unrecorded(path: Path) -> bool:
    return any(not entry["recorded"] for entry in entries(path))


def replay(journal_dir: str, uri: str) -> int:
    """Write every unrecorded line of this store from the journals into the store (a job's run:
    status and error tags, ended FAILED; a sweep's run: its counts, ended); delete the journals
    left with nothing to replay; return how many runs were written."""
    folder = Path(journal_dir).resolve()
    replayed = 0
    for path in sorted(folder.glob("*.jsonl")) if folder.is_dir() else []:
        lines = entries(path)
        pending = [entry for entry in lines
                   if not entry["recorded"] and entry["tracking_uri"] == uri]  # fmt: skip
        for entry in pending:
            replayed += write_to_store(entry)
        if all(entry["recorded"] or entry in pending for entry in lines):
            path.unlink()
    return replayed


def write_to_store(entry: dict[str, Any]) -> bool:
    """Write the entry's run; False for a job that ended before its run existed (resume runs
    it again)."""
    client = MlflowClient(entry["tracking_uri"])
    if entry["kind"] == "sweep":
        metrics = [Metric(f"jobs_{name}", float(n), 0, 0) for name, n in entry["counts"].items()]
        client.log_batch(entry["run_id"], metrics=[*metrics,
                                                   Metric("wall_seconds", entry["seconds"], 0, 0)])
        client.set_terminated(entry["run_id"], "FAILED")
        return True
    if entry["run_id"] is None:
        return False
    client.set_tag(entry["run_id"], "status", entry["status"])
    client.set_tag(entry["run_id"], "error", entry["error"])
    client.set_terminated(entry["run_id"], "FAILED")
    return True
