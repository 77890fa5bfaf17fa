"""Whether a RUNNING run's process still lives: each job run (and each sweep's run) records
its host and pid and beats a heartbeat tag; a later sweep, or a later run of the same job,
marks a run whose process is gone (killed with SIGKILL, a lost node) failed, so that resume
runs the job again and no report counts it."""

import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import mlflow
from mlflow import MlflowClient

from experiments.store.retry import retry_when_busy

HEARTBEAT_SECONDS = 30.0
ORPHAN_AFTER_SECONDS = 300.0  # no heartbeat for this long: the process is gone


def identity_tags() -> dict[str, str]:
    """host, pid and a first heartbeat: the tags a job run starts with."""
    now = f"{time.time():.0f}"
    return {"host": socket.gethostname(), "pid": str(os.getpid()), "heartbeat": now}


def beat_run(run_id: str) -> Callable[[str], None]:
    """A heartbeat of the run: its tag `heartbeat` set to the given unix seconds."""
    client = MlflowClient()
    return lambda now: client.set_tag(run_id, "heartbeat", now)


@contextmanager
def heartbeat(*beats: Callable[[str], None], every: float = HEARTBEAT_SECONDS) -> Iterator[None]:
    """Call each beat with the unix seconds every `every` seconds from a daemon thread while
    the block runs; a beat that meets a busy or unreachable store is skipped (the next one
    tries)."""
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(every):
            for one in beats:
                try:
                    one(f"{time.time():.0f}")
                except Exception:  # noqa: BLE001 - a missed beat only ages the tag
                    pass

    thread = threading.Thread(target=beat, name="mlflow-heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def process_alive(pid: int) -> bool:
    """Whether a process of this pid exists on this host (signal 0 checks, sends nothing)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def orphan_reason(tags: dict[str, str], now: float | None = None) -> str | None:
    """Why a RUNNING run's process is gone, or None while it may live: on this host, its pid
    no longer runs; on any host, its last heartbeat is older than ORPHAN_AFTER_SECONDS."""
    now = time.time() if now is None else now
    host, pid = tags.get("host", "?"), tags.get("pid", "?")
    if host == socket.gethostname() and pid.isdigit() and not process_alive(int(pid)):
        return f"the process is gone: pid {pid} on {host} no longer runs"
    silent = now - float(tags.get("heartbeat", "0"))
    if silent > ORPHAN_AFTER_SECONDS:
        return f"the process is gone: no heartbeat from pid {pid} on {host} for {silent:.0f} s"
    return None


@retry_when_busy
def fail_orphans(experiment_id: str, key: str | None, found_by: str | None) -> int:
    """Mark every RUNNING run of this run_key (None: every job and sweep run of the experiment)
    whose process is gone as failed (tag error with the reason, orphan_found_by = the sweep or
    job that found it, run status FAILED; a job's run also status=failed); return how many."""
    client = MlflowClient()
    running = mlflow.search_runs(
        experiment_ids=[experiment_id],
        filter_string=" and ".join([*([f"tags.run_key = '{key}'"] if key else []),
                                    "attributes.status = 'RUNNING'"]),
        output_format="list",
    )  # fmt: skip
    orphans = 0
    for run in running:
        if "pid" not in run.data.tags:
            continue  # a trial's run, between its creation and its end in one call
        reason = orphan_reason(run.data.tags)
        if reason is None:
            continue
        tags = {"error": f"orphaned: {reason}", "orphan_found_by": found_by or "a single job"}
        if "run_key" in run.data.tags:  # a job's run; a sweep's run keeps its status `sweep`
            tags["status"] = "failed"
        for name, value in tags.items():
            client.set_tag(run.info.run_id, name, value)
        client.set_terminated(run.info.run_id, "FAILED")
        orphans += 1
    return orphans
