"""Which MLflow store a command uses: one resolver for the sweeps, the reports and the UI."""

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import unquote, urlsplit

from experiments.paths import PROJECT_ROOT

SQLITE_PREFIX = "sqlite:///"
# MLflow's job runner (GenAI jobs: prompt optimization, scorers) is of no use to the lab and
# starts eight more processes with its server or UI; the environment may turn it back on
JOBS_OFF = {"MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}


class CredentialsInURI(ValueError):
    """A tracking URI that holds a user name or password: MLflow would store it in the run's
    params and config.yaml, Hydra in its output files, and print it in its "View run at" lines."""


def tracking_uri(configured: str | None = None) -> str:
    """The configured URI, else env MLFLOW_TRACKING_URI, else sqlite:///<project>/mlflow.db;
    CredentialsInURI for a URI with credentials (user:password@host)."""
    uri = (
        configured
        or os.environ.get("MLFLOW_TRACKING_URI")
        or f"{SQLITE_PREFIX}{PROJECT_ROOT / 'mlflow.db'}"
    )
    refuse_credentials(uri)
    return uri


def refuse_credentials(uri: str) -> None:
    """CredentialsInURI naming the fix when the URI's authority holds a user or password."""
    if uri.startswith(SQLITE_PREFIX):
        return
    parts = urlsplit(uri)
    if parts.username is None and parts.password is None:
        return
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    raise CredentialsInURI(
        f"the tracking URI holds credentials; they would be stored in every run and printed: "
        f"use {parts.scheme}://{host}{port}{parts.path} and set MLFLOW_TRACKING_USERNAME and "
        "MLFLOW_TRACKING_PASSWORD in the environment instead (a database URI: a ~/.pgpass file)"
    )


def sqlite_path(uri: str) -> Path | None:
    """The database file of a sqlite:///FILE URI, as SQLAlchemy (and so MLflow) reads it: FILE
    relative to the working directory, or absolute with a 4th slash (sqlite:////abs/mlflow.db);
    None for an in-memory database and for other stores (http, postgresql, ...)."""
    if not uri.startswith(SQLITE_PREFIX):
        return None
    database = unquote(uri[len(SQLITE_PREFIX) :]).split("?", 1)[0]
    if database in ("", ":memory:"):
        return None
    return Path(database).resolve()


@contextmanager
def sqlite_creation_lock(uri: str) -> Iterator[None]:
    """Hold an exclusive lock on <database>.lock (for a sqlite store) while the block runs: two
    sweeps that open a new database at once would both create its tables, and one fails."""
    database = sqlite_path(uri)
    if database is None:
        yield
        return
    database.parent.mkdir(parents=True, exist_ok=True)
    with open(database.with_name(database.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield
