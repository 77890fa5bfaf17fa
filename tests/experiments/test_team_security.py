"""The team store's defences with real processes (`python -m experiments.store.team_server`): basic
auth turns away a request without credentials and stores a sweep's runs with them; PostgreSQL
refuses a client without the password and any other user, its files and the artifacts are the
owner's alone, and its socket is never in a world-writable directory; the command supervises its
two children (one dies: the other is stopped, exit 1 with one line; SIGTERM: both stopped)."""

import base64
import configparser
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import psutil
import psycopg
import pytest
from mlflow import MlflowClient

from experiments.store.team_postgres import (
    MAX_SOCKET_PATH,
    SOCKET_NAME,
    Postgres,
    PostgresError,
    binaries,
)
from experiments.store.team_server import TeamServerError, auth_environment, wait_until_ready

ADMIN = ("admin", "admin-secret-0123")
MEMBERS = {"alice": "alice-secret-0123", "bob": "bob-secret-0123"}
SWEEP = ["-m", "dataset=wine", "method=gbt", "method.n_estimators=5", "engine=inhouse"]


def searchable_temp_dir() -> Path:
    """A fresh data dir whose parents every user may search: as root, PostgreSQL runs as another
    user, who cannot enter pytest's own temp dirs (mode 0700)."""
    return Path(tempfile.mkdtemp(prefix="team-"))


class Command:
    """`python -m experiments.store.team_server` on a free port, its output in files."""

    def __init__(self, data: Path, port: int, *flags: str, env: dict[str, str] | None = None):
        self.data, self.url = data, f"http://127.0.0.1:{port}"
        self.stdout, self.stderr = data / "command.out", data / "command.err"
        command = [sys.executable, "-m", "experiments.store.team_server", "--data", str(data),
                   "--port", str(port), "--workers", "1", *flags]  # fmt: skip
        with open(self.stdout, "w") as stdout, open(self.stderr, "w") as stderr:
            self.process = subprocess.Popen(command, env={**os.environ, **(env or {})},
                                            stdout=stdout, stderr=stderr)  # fmt: skip
        try:
            wait_until_ready(self.url, self.process)
        except RuntimeError:
            raise AssertionError(self.stderr.read_text()[-3000:]) from None
        while "team store at" not in self.stdout.read_text():  # the command saw it ready too
            assert self.process.poll() is None, self.stderr.read_text()[-3000:]
            time.sleep(0.1)

    def children(self) -> list[psutil.Process]:
        return psutil.Process(self.process.pid).children(recursive=True)

    def child(self, word: str) -> psutil.Process:
        """The direct child whose command line starts with a program named `word`."""
        direct = psutil.Process(self.process.pid).children()
        return next(p for p in direct if word in " ".join(p.cmdline()[:4]))

    def our_lines(self) -> list[str]:
        return [line for line in self.stderr.read_text().splitlines()
                if line.startswith("team server:")]  # fmt: skip

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(timeout=120)


def request(url: str, path: str, body: dict | None = None, user: tuple[str, str] | None = None):
    """An HTTP request to the server; (status, parsed JSON or text)."""
    headers = {"Content-Type": "application/json"}
    if user is not None:
        headers["Authorization"] = "Basic " + base64.b64encode(":".join(user).encode()).decode()
    data = None if body is None else json.dumps(body).encode()
    try:
        with urllib.request.urlopen(urllib.request.Request(url + path, data, headers)) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


@pytest.fixture(scope="module")
def auth_server(free_port):
    """The team store with --auth (admin's password from the environment) and two members."""
    data = searchable_temp_dir()
    server = Command(data, free_port(), "--auth",
                     env={"MLFLOW_AUTH_ADMIN_PASSWORD": ADMIN[1]})  # fmt: skip
    for name, password in MEMBERS.items():
        status, text = request(server.url, "/api/2.0/mlflow/users/create",
                               {"username": name, "password": password}, ADMIN)  # fmt: skip
        assert status == 200, text
    yield server
    server.stop()
    shutil.rmtree(data, ignore_errors=True)


def as_member(monkeypatch, name: str) -> None:
    monkeypatch.setenv("MLFLOW_TRACKING_USERNAME", name)
    monkeypatch.setenv("MLFLOW_TRACKING_PASSWORD", MEMBERS[name])


@pytest.mark.slow
def test_basic_auth_turns_away_anonymous_requests_and_stores_members_sweeps(
    auth_server, cli, monkeypatch, tmp_path
):
    url = auth_server.url
    assert request(url, "/api/2.0/mlflow/experiments/search?max_results=1")[0] == 401
    assert request(url, "/api/2.0/mlflow/experiments/create", {"name": "x"})[0] == 401
    assert request(url, "/api/2.0/mlflow/experiments/search?max_results=1",
                   user=("alice", "wrong-password-0"))[0] == 401  # fmt: skip

    tracking = [f"mlflow.tracking_uri={url}", "mlflow.experiment_name=shared"]
    as_member(monkeypatch, "alice")
    first = cli(*SWEEP, "seed=0,1", *tracking)
    assert first.returncode == 0, first.stderr
    # bob logs into alice's experiment: the default permission (EDIT) lets a member do so
    as_member(monkeypatch, "bob")
    second = cli(*SWEEP, "seed=0,1,2", *tracking)
    assert second.returncode == 0, second.stderr
    assert second.stderr.strip().splitlines()[-1].endswith(
        ": 1 ok, 0 skipped, 0 failed, 2 resumed, 0 orphaned")

    client = MlflowClient(url)
    experiment = client.get_experiment_by_name("shared")
    runs = [run for run in client.search_runs([experiment.experiment_id])
            if run.data.tags.get("status") != "sweep"]  # fmt: skip
    assert sorted(run.data.tags["seed"] for run in runs) == ["0", "1", "2"]
    assert {run.data.tags["status"] for run in runs} == {"ok"}
    assert {run.info.user_id for run in runs} == {"alice", "bob"}

    # the passwords are in no param, tag, artifact, Hydra output file or console line
    passwords = list(MEMBERS.values())
    console = first.stdout + first.stderr + second.stdout + second.stderr
    every_run = client.search_runs([experiment.experiment_id])
    stored = [str(run.data.params) + str(run.data.tags) for run in every_run]
    stored += [Path(client.download_artifacts(run.info.run_id, "", str(tmp_path / run.info.run_id)))
               .joinpath("config.yaml").read_text() for run in runs]  # fmt: skip
    stored += [path.read_text(errors="replace") for path in tmp_path.rglob("*") if path.is_file()]
    for password in passwords:
        assert password not in console and not [text for text in stored if password in text]


@pytest.mark.slow
def test_postgres_and_files_are_private(auth_server, monkeypatch):
    data = auth_server.data
    as_member(monkeypatch, "alice")
    client = MlflowClient(auth_server.url)
    run = client.create_run(client.create_experiment("files"))
    client.log_text(run.info.run_id, "a result", "result.txt")

    assert data.stat().st_mode & 0o007 == 0
    assert (data / "postgres").stat().st_mode & 0o777 == 0o700
    private = [data / "pgpass", data / "basic_auth.ini", data / "basic_auth.db",
               data / "flask_secret_key", data / "postgres.log"]  # fmt: skip
    artifacts = [path for path in (data / "artifacts").rglob("*")]
    assert any(path.name == "result.txt" for path in artifacts)
    for path in [data / "artifacts", *private, *artifacts]:
        assert path.stat().st_mode & 0o077 == 0, f"{path} is mode {path.stat().st_mode:o}"

    socket_dir = Path((data / "postgres" / "postmaster.pid").read_text().splitlines()[4])
    assert socket_dir == data / "postgres" and socket_dir.stat().st_mode & 0o077 == 0
    hba = (data / "postgres" / "pg_hba.conf").read_text().splitlines()
    assert [line.split() for line in hba if line and not line.startswith("#")] == [
        ["local", "all", "all", "scram-sha-256"]]
    password = (data / "pgpass").read_text().strip().rsplit(":", 1)[1]
    target = f"host={socket_dir} user=postgres dbname=postgres"
    with psycopg.connect(target, password=password) as connection:  # the owner's way in
        assert connection.execute("SHOW listen_addresses").fetchone() == ("",)
    for wrong in ("", "not-the-password"):
        with pytest.raises(psycopg.OperationalError, match="password"):
            psycopg.connect(target, password=wrong, passfile=str(data / "none"))
    secrets = [password, ADMIN[1], (data / "flask_secret_key").read_text().strip()]
    for process in [psutil.Process(auth_server.process.pid), *auth_server.children()]:
        try:
            command_line = " ".join(process.cmdline())
        except (psutil.ZombieProcess, psutil.NoSuchProcess):
            continue  # a child that has exited since it was listed has no command line left
        assert not any(secret in command_line for secret in secrets), command_line
    if os.geteuid() == 0:  # another user, even with the password, cannot reach the socket
        psql = [str(binaries() / "psql"), "-w", "-h", str(socket_dir), "-U", "postgres", "-c",
                "select 1"]  # fmt: skip
        other = subprocess.run(psql, user="nobody", env={"PGPASSWORD": password},
                               capture_output=True, text=True)  # fmt: skip
        assert other.returncode != 0 and "Permission denied" in other.stderr


def test_the_auth_configuration_and_its_secrets(tmp_path, monkeypatch):
    for variable in ("MLFLOW_AUTH_ADMIN_PASSWORD", "MLFLOW_FLASK_SERVER_SECRET_KEY"):
        monkeypatch.delenv(variable, raising=False)
    with pytest.raises(TeamServerError, match="MLFLOW_AUTH_ADMIN_PASSWORD or --admin-password"):
        auth_environment(tmp_path)
    (tmp_path / "admin").write_text("from-a-file-0123\n")
    env = auth_environment(tmp_path, "READ", admin_password_file=tmp_path / "admin")
    assert env["MLFLOW_AUTH_ADMIN_PASSWORD"] == "from-a-file-0123"
    config = configparser.ConfigParser()
    config.read(env["MLFLOW_AUTH_CONFIG_PATH"])
    assert config["mlflow"]["default_permission"] == "READ"
    assert config["mlflow"]["database_uri"] == f"sqlite:///{tmp_path / 'basic_auth.db'}"
    key = env["MLFLOW_FLASK_SERVER_SECRET_KEY"]
    assert len(key) == 64 and (tmp_path / "flask_secret_key").stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "basic_auth.ini").stat().st_mode & 0o777 == 0o600
    (tmp_path / "basic_auth.db").touch()  # the admin exists: no password needed, same key
    assert auth_environment(tmp_path)["MLFLOW_FLASK_SERVER_SECRET_KEY"] == key
    monkeypatch.setenv("MLFLOW_FLASK_SERVER_SECRET_KEY", "from-the-environment")
    assert auth_environment(tmp_path)["MLFLOW_FLASK_SERVER_SECRET_KEY"] == "from-the-environment"


@pytest.mark.skipif(os.geteuid() != 0, reason="as root only")
def test_as_root_a_data_dir_the_server_user_cannot_reach_is_refused_in_one_line(tmp_path):
    data = tmp_path / "team"  # pytest's temp dirs are mode 0700
    refusal = re.escape(f"cannot reach {data}/postgres ({tmp_path} is mode 700)")
    with pytest.raises(PostgresError, match=refusal):
        Postgres(data).prepare()
    assert tmp_path.stat().st_mode & 0o777 == 0o700  # and no parent was opened


@pytest.mark.slow
def test_a_data_path_too_long_for_a_socket_gets_a_private_socket_dir():
    data = searchable_temp_dir()
    data.chmod(0o711)
    deep = data / ("d" * (MAX_SOCKET_PATH - len(str(data)) - len(SOCKET_NAME)))
    deep.mkdir()
    database = Postgres(deep)
    try:
        database.prepare()
        database.start()
        assert database.socket_dir != database.pgdata
        mode = database.socket_dir.stat().st_mode
        assert mode & 0o777 == 0o700 and database.socket_dir.stat().st_uid == (
            database.user.pw_uid if database.user else os.geteuid())
        psycopg.connect(host=str(database.socket_dir), user="postgres", dbname="postgres",
                        passfile=str(database.passfile)).close()  # fmt: skip
    finally:
        database.stop()
        shutil.rmtree(data, ignore_errors=True)
    assert not database.socket_dir.exists()


@pytest.fixture
def plain_data():
    data = searchable_temp_dir()
    yield data
    shutil.rmtree(data, ignore_errors=True)


@pytest.mark.slow
def test_the_command_stops_postgres_and_says_so_when_mlflow_server_dies(plain_data, free_port):
    server = Command(plain_data, free_port())
    try:
        children = server.children()
        postgres = server.child("postgres")
        server.child("mlflow").kill()
        assert server.process.wait(timeout=120) == 1
        assert server.our_lines() == [
            "team server: mlflow server killed by SIGKILL; stopping PostgreSQL"]
        assert not postgres.is_running()
        assert psutil.wait_procs(children, timeout=10)[1] == []
    finally:
        server.stop()


@pytest.mark.slow
def test_sigterm_stops_both_children(auth_server):
    """Last of the module: it stops the module's server."""
    children = auth_server.children()
    assert auth_server.child("postgres") in children and auth_server.child("mlflow") in children
    started = time.monotonic()
    auth_server.process.send_signal(signal.SIGTERM)
    assert auth_server.process.wait(timeout=120) == 0
    assert psutil.wait_procs(children, timeout=10)[1] == []
    assert auth_server.our_lines() == [
        "team server: SIGTERM: stopping mlflow server and PostgreSQL"]
    assert time.monotonic() - started < 60


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="as root only")
def test_as_root_binaries_in_a_checkout_others_cannot_search_are_copied_into_data(
        tmp_path, monkeypatch):  # fmt: skip
    site = binaries().parents[2]  # a checkout's site-packages in pytest's temp dir (0700)
    for part in ("pgserver/pginstall", "pgserver.libs"):
        shutil.copytree(site / part, tmp_path / part, symlinks=True)
    monkeypatch.setattr("experiments.store.team_postgres.binaries",
                        lambda: tmp_path / "pgserver" / "pginstall" / "bin")
    data = searchable_temp_dir()
    database = Postgres(data)
    try:
        database.prepare()
        database.start()
        assert database.bin == data / "pginstall" / "pgserver" / "pginstall" / "bin"
        assert (data / "pginstall").stat().st_mode & 0o007 == 0  # nothing for others
        psycopg.connect(host=str(database.socket_dir), user="postgres", dbname="postgres",
                        passfile=str(database.passfile)).close()  # fmt: skip
    finally:
        database.stop()
        shutil.rmtree(data, ignore_errors=True)
    assert tmp_path.stat().st_mode & 0o777 == 0o700  # and no parent was opened
