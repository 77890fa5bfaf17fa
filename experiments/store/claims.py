"""Exactly one run per job: before a job runs, it claims its run_key, atomically, in the store
itself, so that two sweeps started at once (or a launcher's retry) never run one job twice.

The claim is a registered model named `lab-claim.<experiment id>.<run_key>.<generation>`: the
model registry lives in the tracking store (the sqlite file; a tracking server's database) and
refuses a second model of the same name (a unique key: RESOURCE_ALREADY_EXISTS), for sqlite and
PostgreSQL alike, through MLflow's client API. The holder tags it with its host, pid and
heartbeat (as a job run: experiments.store.liveness) and deletes it when the job ends. A claim whose
holder is gone (SIGKILL, a lost node) is stale: the next claimer takes generation + 1, which
again only one of several claimers gets. The job checks for a done run (resume) only once it
holds the claim, so a job that another sweep finished in the meantime is resumed, not rerun.
"""

from collections.abc import Iterator
from contextlib import contextmanager

from mlflow import MlflowClient
from mlflow.exceptions import MlflowException
from mlflow.protos.databricks_pb2 import (
    RESOURCE_ALREADY_EXISTS,
    RESOURCE_DOES_NOT_EXIST,
    ErrorCode,
)

from experiments.store.liveness import identity_tags, orphan_reason
from experiments.store.retry import retry_when_busy

PREFIX = "lab-claim"
TAKEN = ErrorCode.Name(RESOURCE_ALREADY_EXISTS)
GONE = ErrorCode.Name(RESOURCE_DOES_NOT_EXIST)
DESCRIPTION = "A running job's claim of its run_key (ensembles lab); deleted when the job ends."


def claim_prefix(experiment_id: str, key: str) -> str:
    return f"{PREFIX}.{experiment_id}.{key}."


def holder_text(tags: dict[str, str]) -> str:
    """`pid 4242 on node-17 (sweep <id>)`: who holds a claim, for the job's log line."""
    text = f"pid {tags.get('pid', '?')} on {tags.get('host', '?')}"
    return f"{text} (sweep {tags['sweep_id']})" if tags.get("sweep_id") else text


@retry_when_busy
def existing_claims(client: MlflowClient, prefix: str) -> dict[int, dict[str, str]]:
    """generation -> tags of every claim of this run_key."""
    models = client.search_registered_models(filter_string=f"name LIKE '{prefix}%'")
    return {int(model.name.rsplit(".", 1)[1]): model.tags for model in models}


@retry_when_busy
def create_claim(client: MlflowClient, name: str, tags: dict[str, str]) -> bool:
    """Create the claim; False when another process created it first."""
    try:
        client.create_registered_model(name, tags=tags, description=DESCRIPTION)
    except MlflowException as error:
        if error.error_code == TAKEN:
            return False
        raise
    return True


def try_claim(experiment_id: str, key: str, sweep_id: str | None) -> tuple[str | None, str]:
    """(the claim's name, "") when this process now holds the job's claim, else (None, the
    holder): a live holder keeps it; stale claims give way to the next generation."""
    client = MlflowClient()
    prefix = claim_prefix(experiment_id, key)
    claims = existing_claims(client, prefix)
    live = {generation: tags for generation, tags in claims.items() if orphan_reason(tags) is None}
    if live:
        return None, holder_text(live[max(live)])
    name = f"{prefix}{max(claims, default=-1) + 1}"
    tags = {**identity_tags(), **({"sweep_id": sweep_id} if sweep_id else {})}
    if not create_claim(client, name, tags):
        winner = existing_claims(client, prefix)
        return None, holder_text(winner[max(winner)]) if winner else "another process"
    for generation in claims:  # stale: their holders are gone
        release(f"{prefix}{generation}")
    return name, ""


@retry_when_busy
def release(name: str) -> None:
    """Delete the claim (already gone: another claimer cleared it as stale)."""
    try:
        MlflowClient().delete_registered_model(name)
    except MlflowException as error:
        if error.error_code != GONE:
            raise


def beat_claim(name: str, now: str) -> None:
    """The claim's heartbeat tag (a claim on another host is stale once it stops)."""
    MlflowClient().set_registered_model_tag(name, "heartbeat", now)


@contextmanager
def job_claim(experiment_id: str, key: str, sweep_id: str | None
              ) -> Iterator[tuple[str | None, str]]:  # fmt: skip
    """Hold the job's claim while the block runs; yield (its name, "") when held, else (None,
    who holds it): the job is then resumed, claimed by that process."""
    name, holder = try_claim(experiment_id, key, sweep_id)
    if name is None:
        yield None, holder
        return
    try:
        yield name, ""
    finally:
        release(name)
