"""`make server`: a team's tracking store on one host, a PostgreSQL database (started by
pgserver, which bundles the server) behind an `mlflow server` that also serves the artifacts.

    python -m experiments.team_server [--data .team] [--host 127.0.0.1] [--port 5000]

The database lives in DATA/postgres and the artifacts in DATA/artifacts, so a restart finds
both. It binds to 127.0.0.1 unless told otherwise; a shared deployment needs MLflow's
authentication (`--app-name basic-auth`, see the README) before it binds to other addresses.
"""

import argparse
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from experiments.paths import PROJECT_ROOT

READY_SECONDS = 120.0


def start_postgres(data: Path):
    """Start (or reuse) the PostgreSQL server of DATA/postgres; return it and its
    SQLAlchemy URI (a unix socket in the data directory)."""
    import pgserver

    server = pgserver.get_server(data / "postgres", cleanup_mode="stop")
    return server, server.get_uri()


def mlflow_server_command(backend_uri: str, artifacts: Path, host: str, port: int,
                          extra: list[str]) -> list[str]:  # fmt: skip
    """The `mlflow server` command line of the team store."""
    return [sys.executable, "-m", "mlflow", "server", "--backend-store-uri", backend_uri,
            "--artifacts-destination", str(artifacts), "--serve-artifacts",
            "--host", host, "--port", str(port), *extra]  # fmt: skip


def wait_until_ready(url: str, process: subprocess.Popen, seconds: float = READY_SECONDS) -> None:
    """Poll the server's /health until it answers; RuntimeError if it exits or stays silent."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"mlflow server exited with status {process.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=2) as answer:
                if answer.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"mlflow server did not answer at {url} within {seconds:.0f} s")


@contextmanager
def team_server(data: Path, host: str = "127.0.0.1", port: int = 5000,
                extra: list[str] | None = None) -> Iterator[str]:  # fmt: skip
    """Run PostgreSQL and the MLflow server while the block runs; yield the tracking URI."""
    data.mkdir(parents=True, exist_ok=True)
    database, backend_uri = start_postgres(data)
    command = mlflow_server_command(backend_uri, data / "artifacts", host, port, extra or [])
    server = subprocess.Popen(command, cwd=data)
    url = f"http://{host}:{port}"
    try:
        wait_until_ready(url, server)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
        database.cleanup()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.team_server")
    parser.add_argument("--data", type=Path, default=PROJECT_ROOT / ".team")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=5000)
    args, extra = parser.parse_known_args(argv)
    with team_server(args.data.resolve(), args.host, args.port, extra) as url:
        print(f"team store at {url}: MLFLOW_TRACKING_URI={url} make sweep; Ctrl-C stops it",
              flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            return 0


if __name__ == "__main__":
    sys.exit(main())
