"""`make server`: a team's tracking store on one host, a private PostgreSQL (the server pgserver
bundles, see experiments.store.team_postgres) behind an `mlflow server` that also serves the
artifacts.

    python -m experiments.store.team_server [--data .team] [--host 127.0.0.1] [--port 5000]
        [--auth [--default-permission EDIT] [--admin-password-file FILE] [--secret-key-file FILE]]
        [any other `mlflow server` option: --allowed-hosts, --workers, ...]

The database lives in DATA/postgres and the artifacts in DATA/artifacts, so a restart finds both;
DATA is private (mode 0700, files 0600). It binds to 127.0.0.1 unless told otherwise.

--auth starts MLflow's basic-auth app (`--app-name basic-auth`): its configuration is written to
DATA/basic_auth.ini (MLFLOW_AUTH_CONFIG_PATH) and its users live in DATA/basic_auth.db. Secrets
come from the environment or a file, never the command line (which `ps` shows to everyone): the
admin's name MLFLOW_AUTH_ADMIN_USERNAME (default `admin`), the admin's password
MLFLOW_AUTH_ADMIN_PASSWORD or --admin-password-file (needed on the first start only, when the
admin user is created), the CSRF key MLFLOW_FLASK_SERVER_SECRET_KEY or --secret-key-file (else
one generated once into DATA/flask_secret_key).

The command supervises both children: when one exits the other is stopped and the command exits
1 with one line naming what died; SIGTERM and SIGINT stop both and exit 0.
"""

import argparse
import contextlib
import os
import secrets
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import psutil

from experiments.paths import PROJECT_ROOT
from experiments.store.team_postgres import ROOT_SERVER_USER, Postgres, private_child, write_private
from experiments.store.uri import JOBS_OFF

READY_SECONDS = 120.0
STOP_SECONDS = 30.0
# the permission every user has on what nobody granted them: EDIT lets team members log runs
# into each other's experiments and mark a dead sweep's runs failed; deleting and granting need
# MANAGE (the creator's, or an admin's)
DEFAULT_PERMISSION = "EDIT"
PERMISSIONS = ("NO_PERMISSIONS", "READ", "USE", "EDIT", "MANAGE")
AUTH_INI = """\
# written by experiments.store.team_server at each start of `--auth`; users live in database_uri
[mlflow]
default_permission = {permission}
database_uri = sqlite:///{database}
admin_username = admin
authorization_function = mlflow.server.auth:authenticate_request_basic_auth
# a checked password is remembered for 60 s per worker (scrypt costs 0.1 s of CPU a request): a
# password changed or a user deleted through another worker stays valid up to that long
auth_cache_ttl_seconds = 60
"""


class TeamServerError(RuntimeError):
    """A start-up problem, said in one line."""


class Stopped(Exception):
    """SIGTERM or SIGINT arrived."""


def mlflow_server_command(backend_uri: str, artifacts: Path, host: str, port: int,
                          extra: list[str]) -> list[str]:  # fmt: skip
    """The `mlflow server` command line of the team store (no secret in it)."""
    return [sys.executable, "-m", "mlflow", "server", "--backend-store-uri", backend_uri,
            "--artifacts-destination", str(artifacts), "--serve-artifacts",
            "--host", host, "--port", str(port), *extra]  # fmt: skip


def wait_until_ready(url: str, process: subprocess.Popen, seconds: float = READY_SECONDS) -> None:
    """Poll the server's /health until it answers; RuntimeError if it exits or stays silent."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"mlflow server {describe_exit(process.returncode)}")
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=2) as answer:
                if answer.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"mlflow server did not answer at {url} within {seconds:.0f} s")


def secret(variable: str, file: Path | None) -> str | None:
    """A secret from the environment variable, else from the file's first line, else None."""
    if os.environ.get(variable):
        return os.environ[variable]
    if file is None:
        return None
    try:
        return file.read_text().strip().splitlines()[0]
    except (OSError, IndexError) as error:
        raise TeamServerError(f"cannot read a secret from {file}: {error}") from error


def auth_environment(data: Path, permission: str = DEFAULT_PERMISSION,
                     admin_password_file: Path | None = None,
                     secret_key_file: Path | None = None) -> dict[str, str]:  # fmt: skip
    """Write DATA/basic_auth.ini; return the variables MLflow's basic-auth app reads."""
    config, database = data / "basic_auth.ini", data / "basic_auth.db"
    write_private(config, AUTH_INI.format(permission=permission, database=database))
    key = secret("MLFLOW_FLASK_SERVER_SECRET_KEY", secret_key_file)
    if key is None:
        key_file = data / "flask_secret_key"
        if not key_file.exists():
            write_private(key_file, secrets.token_hex(32))
        key = key_file.read_text().strip()
    env = {"MLFLOW_AUTH_CONFIG_PATH": str(config), "MLFLOW_FLASK_SERVER_SECRET_KEY": key}
    password = secret("MLFLOW_AUTH_ADMIN_PASSWORD", admin_password_file)
    if password:
        env["MLFLOW_AUTH_ADMIN_PASSWORD"] = password
    elif not database.exists():
        raise TeamServerError("--auth: the first start creates the admin user and needs its "
                              "password (12 characters or more): set MLFLOW_AUTH_ADMIN_PASSWORD "
                              "or --admin-password-file FILE")  # fmt: skip
    return env


def process_group(pgid: int) -> list[psutil.Process]:
    """The live (not zombie) processes of a process group."""
    members = []
    for process in psutil.process_iter(["status"]):
        with contextlib.suppress(OSError, psutil.Error):
            if os.getpgid(process.pid) == pgid and process.info["status"] != psutil.STATUS_ZOMBIE:
                members.append(process)
    return members


def stop_process_group(process: subprocess.Popen, seconds: float = STOP_SECONDS) -> None:
    """SIGTERM to a child's process group (mlflow server and its uvicorn workers), SIGKILL to
    what is left after `seconds`; returns once the group is gone, even if its leader died first."""
    process.poll()
    for signum in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signum)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=seconds)
        _, alive = psutil.wait_procs(process_group(process.pid), timeout=seconds)
        if not alive:
            return


def describe_exit(returncode: int) -> str:
    if returncode < 0:
        return f"killed by {signal.Signals(-returncode).name}"
    return f"exited with status {returncode}"


class TeamServer:
    """PostgreSQL and `mlflow server` of DATA, started and stopped together."""

    def __init__(self, data: Path, host: str = "127.0.0.1", port: int = 5000,
                 extra: list[str] | None = None, env: dict[str, str] | None = None,
                 output=None) -> None:  # fmt: skip
        self.data, self.host, self.port = data, host, port
        self.extra, self.env, self.output = extra or [], env or {}, output
        self.url = f"http://{host}:{port}"
        self.database: Postgres | None = None
        self.mlflow: subprocess.Popen | None = None

    def start(self) -> None:
        self.start_database()
        self.start_mlflow()

    def start_database(self) -> None:
        self.database = Postgres(self.data)
        self.database.prepare()
        self.database.start()
        artifacts = self.data / "artifacts"
        artifacts.mkdir(mode=0o700, exist_ok=True)
        artifacts.chmod(0o700)

    def start_mlflow(self) -> None:
        """Start `mlflow server` in its own process group (umask 077, SIGTERM if we die)."""
        command = mlflow_server_command(self.database.uri, self.data / "artifacts", self.host,
                                        self.port, self.extra)  # fmt: skip
        env = {**JOBS_OFF, **os.environ, **self.database.client_env, **self.env}
        self.mlflow = subprocess.Popen(command, cwd=self.data, env=env, stdout=self.output,
                                       stderr=self.output, start_new_session=True,
                                       preexec_fn=private_child(signal.SIGTERM))  # fmt: skip
        wait_until_ready(self.url, self.mlflow)

    def stop_mlflow(self) -> None:
        if self.mlflow is not None:
            stop_process_group(self.mlflow)

    def stop(self) -> None:
        self.stop_mlflow()
        if self.database is not None:
            self.database.stop()

    def dead_child(self) -> str | None:
        """`mlflow server killed by SIGKILL`: which child has exited, if one has."""
        for name, child in (("mlflow server", self.mlflow), ("PostgreSQL", self.database.process)):
            if child.poll() is not None:
                return f"{name} {describe_exit(child.returncode)}"
        return None


def stop_on_signal(signum: int, frame) -> None:
    raise Stopped(signal.Signals(signum).name)


def parse_arguments(argv: list[str] | None) -> tuple[argparse.Namespace, list[str]]:
    parser = argparse.ArgumentParser(prog="python -m experiments.store.team_server",
                                     epilog="other options go to `mlflow server`")  # fmt: skip
    parser.add_argument("--data", type=Path, default=PROJECT_ROOT / ".team")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=5000)
    parser.add_argument("--auth", action="store_true", help="MLflow's basic-auth app")
    parser.add_argument("--default-permission", choices=PERMISSIONS,
                        help="with --auth: every user's permission on what nobody granted them "
                             f"(default {DEFAULT_PERMISSION})")
    parser.add_argument("--admin-password-file", type=Path,
                        help="with --auth: else MLFLOW_AUTH_ADMIN_PASSWORD")
    parser.add_argument("--secret-key-file", type=Path,
                        help="with --auth: else MLFLOW_FLASK_SERVER_SECRET_KEY, else generated")
    args, extra = parser.parse_known_args(argv)
    auth_only = [args.default_permission, args.admin_password_file, args.secret_key_file]
    if not args.auth and any(value is not None for value in auth_only):
        parser.error("--default-permission, --admin-password-file, --secret-key-file: only with "
                     "--auth")  # fmt: skip
    args.default_permission = args.default_permission or DEFAULT_PERMISSION
    return args, extra


def main(argv: list[str] | None = None) -> int:
    args, extra = parse_arguments(argv)
    os.umask(0o077)
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, stop_on_signal)
    data = args.data.resolve()
    server = TeamServer(data, args.host, args.port, extra)
    try:
        data.mkdir(mode=0o700, parents=True, exist_ok=True)
        if args.auth:
            server.env = auth_environment(data, args.default_permission,
                                          args.admin_password_file, args.secret_key_file)
            server.extra = ["--app-name", "basic-auth", *extra]
        if os.geteuid() == 0:
            print(f"running as root: PostgreSQL runs as system user {ROOT_SERVER_USER} (added "
                  f"if missing); {data} becomes root:{ROOT_SERVER_USER} mode 0710 and "
                  f"{data / 'postgres'} that user's own (0700); nothing else changes", flush=True)
        server.start()
        access = (f"basic auth, default permission {args.default_permission}: sweeps set "
                  "MLFLOW_TRACKING_USERNAME and MLFLOW_TRACKING_PASSWORD" if args.auth
                  else "no authentication: every local user can read and delete everything")
        print(f"team store at {server.url} ({access}): MLFLOW_TRACKING_URI={server.url} make "
              "sweep; Ctrl-C stops it", flush=True)  # fmt: skip
        while (dead := server.dead_child()) is None:
            time.sleep(0.5)
        stopping = "PostgreSQL" if dead.startswith("mlflow") else "mlflow server"
        print(f"team server: {dead}; stopping {stopping}", file=sys.stderr, flush=True)
        return 1
    except Stopped as stop:
        print(f"team server: {stop}: stopping mlflow server and PostgreSQL", file=sys.stderr,
              flush=True)  # fmt: skip
        return 0
    except RuntimeError as error:
        print(f"team server: {error}", file=sys.stderr, flush=True)
        return 1
    finally:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
        server.stop()


if __name__ == "__main__":
    sys.exit(main())
