"""The team store's PostgreSQL, private by default: the server the `pgserver` package bundles,
run as a child process with settings of our own (pgserver's own start-up trusts every local user
and may put its socket in a world-writable directory).

- The superuser `postgres` has a random password (set in single-user mode, before the server
  first listens), kept in DATA/pgpass (mode 0600) and handed to clients as PGPASSFILE; pg_hba.conf
  allows only `local all all scram-sha-256`: no TCP at all (listen_addresses is empty).
- The socket lives in DATA/postgres (mode 0700) with unix_socket_permissions 0700; a path too
  long for a socket gets a fresh private directory (mode 0700) in the temp dir instead.
- As root: PostgreSQL refuses to run as root, so it runs as the system user `pgserver` (added by
  `useradd --system` if missing, the user pgserver itself uses); DATA becomes root:pgserver 0710
  so that this user can reach DATA/postgres (its own, 0700) and nothing else. No other directory
  is changed: a parent of DATA that others cannot search is refused; binaries in a checkout that
  others cannot search are copied into DATA/pginstall (read-only to that user's group).
"""

import contextlib
import ctypes
import grp
import importlib.util
import os
import pwd
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

SUPERUSER = "postgres"
DATABASE = "postgres"
ROOT_SERVER_USER = "pgserver"
SOCKET_NAME = ".s.PGSQL.5432"
MAX_SOCKET_PATH = 107  # sun_path holds 108 bytes with the final NUL (Linux)
READY_SECONDS = 60.0
HBA = "# written by experiments.store.team_postgres: the socket only, with a password\n" \
      "local all all scram-sha-256\n"  # fmt: skip
PR_SET_PDEATHSIG = 1


class PostgresError(RuntimeError):
    """A start-up problem, said in one line."""


def binaries() -> Path:
    """The bin/ directory of the PostgreSQL that pgserver bundles (found without importing it)."""
    spec = importlib.util.find_spec("pgserver")
    if spec is None or not spec.submodule_search_locations:
        raise PostgresError("pgserver is not installed: pip install -r requirements/team.lock")
    return Path(spec.submodule_search_locations[0]) / "pginstall" / "bin"


def server_user() -> pwd.struct_passwd | None:
    """The system user PostgreSQL runs as when we are root (None: ourselves)."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam(ROOT_SERVER_USER)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin",
                        ROOT_SERVER_USER], check=True, capture_output=True)  # fmt: skip
        return pwd.getpwnam(ROOT_SERVER_USER)


def unsearchable_parent(path: Path, user: pwd.struct_passwd) -> Path | None:
    """The first directory above `path` that `user` may not search (execute), if any."""
    groups = {user.pw_gid} | {g.gr_gid for g in grp.getgrall() if user.pw_name in g.gr_mem}
    for parent in path.parents:
        status = parent.stat()
        if status.st_uid == user.pw_uid:
            allowed = status.st_mode & 0o100
        elif status.st_gid in groups:
            allowed = status.st_mode & 0o010
        else:
            allowed = status.st_mode & 0o001
        if not allowed:
            return parent
    return None


def copied_binaries(bin_dir: Path, data: Path, user: pwd.struct_passwd) -> Path:
    """The bundled PostgreSQL copied once into DATA/pginstall with the libraries its RPATH
    names ($ORIGIN/../../../pgserver.libs), owned by root and readable and searchable by the
    server user's group only; return its bin/ directory."""
    site = bin_dir.parents[2]  # site-packages: pgserver/pginstall/bin
    target = data / "pginstall"
    if not target.exists():
        for part in ("pgserver/pginstall", "pgserver.libs"):
            shutil.copytree(site / part, target / part, symlinks=True)
        for folder, directories, files in os.walk(target):
            for name in [folder, *(os.path.join(folder, entry) for entry in directories + files)]:
                if not os.path.islink(name):
                    os.chown(name, 0, user.pw_gid)
                    mode = os.stat(name).st_mode
                    os.chmod(name, 0o750 if os.path.isdir(name) or mode & 0o100 else 0o640)
    return target / "pgserver" / "pginstall" / "bin"


def run_as(user: pwd.struct_passwd | None) -> dict:
    """Popen keywords that run a command as `user` (nothing when we are not root)."""
    if user is None:
        return {}
    return {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []}


def private_child(signum: int):
    """A preexec_fn: the child creates files only their owner reads (umask 077) and gets
    `signum` when its parent dies, even by SIGKILL (prctl PR_SET_PDEATHSIG)."""

    prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up before the fork, not in it

    def preexec() -> None:
        os.umask(0o077)
        prctl(PR_SET_PDEATHSIG, signum)

    return preexec


def private_directory(path: Path, user: pwd.struct_passwd | None) -> None:
    """Make `path` (mode 0700) belong to `user`; create it if missing."""
    path.mkdir(mode=0o700, exist_ok=True)
    if user is not None:
        os.chown(path, user.pw_uid, user.pw_gid)
    path.chmod(0o700)


def write_private(path: Path, text: str, user: pwd.struct_passwd | None = None) -> None:
    """Write `text` to a file only its owner may read (mode 0600), owned by `user` if given."""
    path.unlink(missing_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as file:
        file.write(text)
    if user is not None:
        os.chown(path, user.pw_uid, user.pw_gid)


def run_tool(command: list[str], user: pwd.struct_passwd | None, stdin: str = "") -> None:
    """Run a PostgreSQL tool as the server's user; PostgresError with its last line if it fails."""
    done = subprocess.run(command, input=stdin, text=True, capture_output=True, **run_as(user))
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines() or ["no output"]
        raise PostgresError(f"{Path(command[0]).name} failed: {lines[-1]}")


class Postgres:
    """The private PostgreSQL of DATA/postgres (see the module's docstring): prepare(), start(),
    stop()."""

    def __init__(self, data: Path) -> None:
        self.data = data
        self.pgdata = data / "postgres"
        self.passfile = data / "pgpass"
        self.user = server_user()
        self.bin = binaries()
        self.socket_dir = self.pgdata
        self.process: subprocess.Popen | None = None

    @property
    def uri(self) -> str:
        """The SQLAlchemy URI (no password: libpq reads it from PGPASSFILE)."""
        return f"postgresql://{SUPERUSER}@/{DATABASE}?host={self.socket_dir}"

    @property
    def client_env(self) -> dict[str, str]:
        """The environment a client (mlflow server) needs besides the URI."""
        return {"PGPASSFILE": str(self.passfile)}

    def prepare(self) -> None:
        """Private directories, the cluster, the superuser's password and pg_hba.conf."""
        self.data.mkdir(mode=0o700, parents=True, exist_ok=True)
        if self.user is None:
            self.data.chmod(0o700)
        else:
            os.chown(self.data, 0, self.user.pw_gid)
            self.data.chmod(0o710)
            parent = unsearchable_parent(self.pgdata, self.user)
            if parent is not None:
                raise PostgresError(
                    f"as root, PostgreSQL runs as user {ROOT_SERVER_USER}, who cannot reach "
                    f"{self.pgdata} ({parent} is mode {parent.stat().st_mode & 0o777:o}): choose "
                    "a --data whose parents others may search (o+x), or run as a normal user")
            if unsearchable_parent(self.bin / "postgres", self.user) is not None:
                self.bin = copied_binaries(self.bin, self.data, self.user)
        private_directory(self.pgdata, self.user)
        if not (self.pgdata / "PG_VERSION").exists():
            run_tool([str(self.bin / "initdb"), "-D", str(self.pgdata), "-U", SUPERUSER,
                      "--auth=reject", "--encoding=utf8"], self.user)  # fmt: skip
        if not self.passfile.exists():
            password = secrets.token_urlsafe(24)
            run_tool([str(self.bin / "postgres"), "--single", "-D", str(self.pgdata), DATABASE],
                     self.user, f"ALTER ROLE {SUPERUSER} PASSWORD '{password}';\n")  # fmt: skip
            write_private(self.passfile, f"*:*:*:{SUPERUSER}:{password}\n")
        write_private(self.pgdata / "pg_hba.conf", HBA, self.user)

    def start(self) -> None:
        """Start the server as a child (stopped by SIGINT if we die) and wait until it accepts."""
        if len(str(self.pgdata / SOCKET_NAME)) > MAX_SOCKET_PATH:
            self.socket_dir = Path(tempfile.mkdtemp(prefix="team-pg-"))
            private_directory(self.socket_dir, self.user)
        with open(os.open(self.data / "postgres.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND,
                          0o600), "a") as log:  # fmt: skip
            self.process = subprocess.Popen(
                [str(self.bin / "postgres"), "-D", str(self.pgdata), "-k", str(self.socket_dir),
                 "-c", "listen_addresses=", "-c", "unix_socket_permissions=0700"],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True,
                preexec_fn=private_child(signal.SIGINT), **run_as(self.user))  # fmt: skip
        deadline = time.monotonic() + READY_SECONDS
        ready = [str(self.bin / "pg_isready"), "-q", "-h", str(self.socket_dir)]
        while subprocess.run(ready).returncode != 0:
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                last = (self.data / "postgres.log").read_text().strip().splitlines()
                raise PostgresError(f"PostgreSQL did not start: {last[-1] if last else '?'}")
            time.sleep(0.2)

    def stop(self, seconds: float = 30.0) -> None:
        """Fast shutdown (SIGINT: roll back open transactions, close sessions), then SIGKILL."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=seconds)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.socket_dir != self.pgdata:
            with contextlib.suppress(OSError):
                shutil.rmtree(self.socket_dir)
