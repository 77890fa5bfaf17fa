"""Which MLflow store a command uses: one resolver for the sweeps, the reports and the UI."""

import os
from pathlib import Path
from urllib.parse import unquote

from experiments.paths import PROJECT_ROOT

SQLITE_PREFIX = "sqlite:///"


def tracking_uri(configured: str | None = None) -> str:
    """The configured URI, else env MLFLOW_TRACKING_URI, else sqlite:///<project>/mlflow.db."""
    return (
        configured
        or os.environ.get("MLFLOW_TRACKING_URI")
        or f"{SQLITE_PREFIX}{PROJECT_ROOT / 'mlflow.db'}"
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
