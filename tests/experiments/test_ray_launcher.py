"""A sweep through Hydra's Ray launcher on a Ray cluster the test starts (`ray start --head`, on
127.0.0.1 with token authentication, as docs/security.md tells) stores the runs of the
sequential sweep: the same run keys, statuses and scores, every job a child of the sweep's run,
each run in a Ray worker process; a second sweep resumes them all. The cluster listens on
loopback only and refuses a client without its token; no secret of the sweep's environment
(nor the token) reaches Ray's files, Hydra's outputs, the store or the console; a worker killed
with SIGKILL costs one retry, not a run. A sweep that starts its own local cluster keeps it on
loopback with a token no file holds. The tests stop only their own cluster's processes."""

import os
import secrets
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest
from mlflow import MlflowClient
from omegaconf import OmegaConf

from experiments import ray_cluster
from experiments.ray_cluster import ONE_NODE

RAY = str(Path(sys.executable).parent / "ray")
# 8 jobs: AdaBoost on xgboost and regression skip
SWEEP = ["-m", "dataset=wine,diabetes", "method=gbt,adaboost", "engine=inhouse,xgboost",
         "method.n_estimators=10", "seed=0"]  # fmt: skip
SCORES = ("test_error", "test_rmse", "test_logloss", "n_trees", "n_leaves")
SMALL_SWEEP = ["-m", "dataset=wine", "method=gbt", "engine=inhouse", "method.n_estimators=5",
               "seed=0,1"]  # fmt: skip
SLOW_SWEEP = ["-m", "dataset=hastie_10_2", "method=gbt", "engine=inhouse",
              "method.n_estimators=3000", "eval.curve_every=0", "seed=0,1",
              "mlflow.experiment_name=killed"]  # fmt: skip  # fits of several seconds
OWNER = "LAB_TEST_RAY_CLUSTER"  # marks the processes of the test's own cluster
LOOPBACK = ("127.0.0.1", "::ffff:127.0.0.1", "::1")
PLANTED = ("MLFLOW_TRACKING_PASSWORD", "MLFLOW_TRACKING_TOKEN", "MLFLOW_AUTH_ADMIN_PASSWORD",
           "MLFLOW_FLASK_SERVER_SECRET_KEY", "EXPERIMENTS_SECRET", "NUMBA_TOKEN")  # fmt: skip


@dataclass(frozen=True)
class Head:
    address: str
    temp: Path  # Ray's temporary directory: sockets, session logs
    token_file: Path
    node_password: str  # MLFLOW_TRACKING_PASSWORD in the environment of `ray start`

    @property
    def token(self) -> str:
        return self.token_file.read_text().strip()


def own_processes(temp: Path) -> list[psutil.Process]:
    """The processes `ray start --temp-dir=temp` started (OWNER in their environment) and all
    their children (Ray's agents and workers), nothing of another cluster."""

    def owned(process: psutil.Process) -> bool:
        try:
            return process.pid != os.getpid() and process.environ().get(OWNER) == str(temp)
        except (psutil.Error, OSError):
            return False

    roots = [process for process in psutil.process_iter() if owned(process)]
    family = {process.pid: process for root in roots
              for process in [root, *root.children(recursive=True)]}  # fmt: skip
    return list(family.values())


def stop(processes: list[psutil.Process]) -> None:
    """SIGTERM, then SIGKILL to what still runs 5 s later."""
    for process in processes:
        try:
            process.terminate()
        except psutil.NoSuchProcess:
            pass
    _, alive = psutil.wait_procs(processes, timeout=5)
    for process in alive:
        process.kill()
    psutil.wait_procs(alive, timeout=5)


def listening(processes: list[psutil.Process]) -> set[tuple[str, int]]:
    """The (address, port) pairs the processes listen on."""
    sockets = set()
    for process in processes:
        try:
            sockets |= {tuple(c.laddr) for c in process.net_connections("inet")
                        if c.status == psutil.CONN_LISTEN}  # fmt: skip
        except psutil.Error:
            pass
    return sockets


def files_holding(secret: str, *directories: Path) -> list[Path]:
    """Every file under the directories whose bytes contain the secret."""
    needle = secret.encode()
    files = [path for directory in directories for path in directory.rglob("*")
             if path.is_file() and not path.is_symlink()]  # fmt: skip
    return [path for path in files if needle in path.read_bytes()]


@pytest.fixture
def short_temp():
    """A private directory with a short path (Ray's sockets need paths under 108 characters),
    removed after the test."""
    private = Path(tempfile.mkdtemp(prefix="ray", dir="/tmp"))
    yield private
    shutil.rmtree(private, ignore_errors=True)


@pytest.fixture(scope="module")
def head(free_port):
    """A one-node Ray cluster with 2 CPUs on 127.0.0.1 that requires a token (in a file only its
    owner reads), with the node's MLflow credentials in the environment of `ray start`; its
    temporary directory in a private one (Ray makes it world-writable, its logs readable by
    all) and short, as Ray's sockets need paths under 108 characters."""
    private = Path(tempfile.mkdtemp(prefix="ray", dir="/tmp"))
    temp = private / "t"
    token_file = private / "auth_token"
    node_password = secrets.token_hex(16)
    with os.fdopen(os.open(token_file, os.O_WRONLY | os.O_CREAT, 0o600), "w") as file:
        file.write(secrets.token_hex(32))
    env = {**os.environ, **ONE_NODE, "RAY_AUTH_MODE": "token",
           "RAY_AUTH_TOKEN_PATH": str(token_file), OWNER: str(temp),
           "MLFLOW_TRACKING_USERNAME": "node",
           "MLFLOW_TRACKING_PASSWORD": node_password}  # fmt: skip
    env.pop("RAY_AUTH_TOKEN", None)
    port = free_port()
    start = [RAY, "start", "--head", "--node-ip-address=127.0.0.1", f"--port={port}",
             "--num-cpus=2", "--include-dashboard=false", "--disable-usage-stats",
             f"--temp-dir={temp}"]  # fmt: skip
    subprocess.run(start, env=env, check=True, capture_output=True, timeout=180)
    yield Head(f"127.0.0.1:{port}", temp, token_file, node_password)
    stop(own_processes(temp))
    assert own_processes(temp) == []
    shutil.rmtree(private, ignore_errors=True)


@pytest.fixture
def with_token(head: Head, monkeypatch) -> Head:
    """The sweeps of the test (`cli`) hold the cluster's token: its file's path, not its value."""
    monkeypatch.setenv("RAY_AUTH_MODE", "token")
    monkeypatch.setenv("RAY_AUTH_TOKEN_PATH", str(head.token_file))
    monkeypatch.delenv("RAY_AUTH_TOKEN", raising=False)
    return head


def on_ray(head: Head, *overrides: str) -> list[str]:
    return [*overrides, "hydra/launcher=ray", f"hydra.launcher.ray.init.address={head.address}"]


def counts(sweep: subprocess.CompletedProcess) -> str:
    """The job counts of the sweep's summary line."""
    return sweep.stderr.strip().splitlines()[-1].split(" s: ")[1]


def by_key(runs: list) -> dict:
    return {run.data.tags["run_key"]: run for run in runs}


@pytest.mark.slow
def test_a_sweep_on_ray_stores_the_runs_of_the_sequential_sweep_and_no_secret(
    cli, cli_runs, with_token, tmp_path, monkeypatch
):
    planted = {name: secrets.token_hex(16) for name in PLANTED}
    for name, value in planted.items():
        monkeypatch.setenv(name, value)
    sequential = cli(*SWEEP, "mlflow.experiment_name=sequential")
    assert sequential.returncode == 0, sequential.stderr
    ray_sweep = on_ray(with_token, *SWEEP, "mlflow.experiment_name=ray")
    first = cli(*ray_sweep)
    assert first.returncode == 0, first.stderr
    assert counts(first) == counts(sequential) == "5 ok, 3 skipped, 0 failed, 0 resumed, 0 orphaned"
    expected, stored = by_key(cli_runs("sequential")), by_key(cli_runs("ray"))
    assert stored.keys() == expected.keys() and len(stored) == 8
    for key, run in stored.items():
        reference = expected[key]
        assert run.info.run_name == reference.info.run_name
        assert run.data.tags["status"] == reference.data.tags["status"]
        assert run.data.tags.get("skip_reason") == reference.data.tags.get("skip_reason")
        scores = {name: value for name, value in run.data.metrics.items() if name in SCORES}
        assert scores == {name: reference.data.metrics[name] for name in scores}
    assert {run.data.tags["status"] for run in stored.values()} == {"ok", "skipped"}
    assert "Ray Launcher is launching 8 jobs" in first.stdout
    # the store and the parent run reach Ray's workers only through the forwarded environment
    [sweep] = MlflowClient(f"sqlite:///{tmp_path / 'mlflow.db'}").search_runs(
        [stored[next(iter(stored))].info.experiment_id], "tags.status = 'sweep'"
    )
    assert sweep.data.tags["launcher"] == "RayLauncher"
    assert {run.data.tags["mlflow.parentRunId"] for run in stored.values()} == {sweep.info.run_id}
    assert {run.data.tags["sweep_id"] for run in stored.values()} == {sweep.info.run_id}

    again = cli(*ray_sweep)
    assert again.returncode == 0, again.stderr
    assert counts(again) == "0 ok, 0 skipped, 0 failed, 8 resumed, 0 orphaned"
    assert len(cli_runs("ray")) == 8

    # no secret of the sweep's environment nor of the node's, nor the token, in any file of
    # Ray's, Hydra's or the store's, nor on the console; the jobs got the forwarded variables
    assert "MLFLOW_TRACKING_URI" in files_holding_text(with_token.temp, "runtime_env")
    planted |= {"the cluster's token": with_token.token,
                "the node's MLFLOW_TRACKING_PASSWORD": with_token.node_password}  # fmt: skip
    console = first.stdout + first.stderr + again.stdout + again.stderr
    for name, value in planted.items():
        holding = files_holding(value, with_token.temp, tmp_path)
        assert holding == [], f"{name} found in {holding}"
        assert value not in console, f"{name} printed"


def test_only_the_variables_a_job_reads_reach_ray_and_never_a_secret(monkeypatch, capsys):
    import ray

    environ = {"MLFLOW_TRACKING_URI": "http://store:5000", "MLFLOW_TRACKING_USERNAME": "alice",
               "MLFLOW_TRACKING_PASSWORD": "pw", "MLFLOW_TRACKING_TOKEN": "t",
               "MLFLOW_FLASK_SERVER_SECRET_KEY": "k", "MLFLOW_AUTH_ADMIN_PASSWORD": "a",
               "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "7", "EXPERIMENTS_SWEEP_RUN": "abc",
               "EXPERIMENTS_API_KEY": "k", "ENSEMBLES_OPENML_HOME": "/data",
               "NUMBA_CACHE_DIR": "/cache", "AWS_SECRET_ACCESS_KEY": "s",
               "HOME": "/home/a"}  # fmt: skip
    monkeypatch.setattr(ray_cluster.os, "environ", environ)
    calls = []
    monkeypatch.setattr(ray, "init", lambda **kwargs: calls.append(kwargs))
    env_vars = {"OMP_NUM_THREADS": "1", "HF_TOKEN": "h"}  # given in the launcher's config
    init = {"address": "10.0.0.5:6379", "runtime_env": {"env_vars": env_vars}}
    ray_cluster.connect(OmegaConf.create({"hydra": {"launcher": {"ray": {"init": init}}}}))
    [call] = calls
    assert call["runtime_env"]["env_vars"] == {
        "MLFLOW_TRACKING_URI": "http://store:5000", "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "7",
        "EXPERIMENTS_SWEEP_RUN": "abc", "ENSEMBLES_OPENML_HOME": "/data",
        "NUMBA_CACHE_DIR": "/cache", "OMP_NUM_THREADS": "1"}  # fmt: skip
    assert call["address"] == "10.0.0.5:6379" and "RAY_AUTH_MODE" not in environ
    assert "not passed to Ray, which logs a runtime_env in cleartext: HF_TOKEN" in (
        capsys.readouterr().err)  # fmt: skip


def connects(head: Head, tmp_path: Path, **auth: str) -> subprocess.CompletedProcess:
    """A Ray client that joins the cluster with the given RAY_AUTH_* variables only (its home
    holds no token file); Ray gives up after 2 connection attempts."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("RAY_")}
    env |= {**ONE_NODE, **auth, "HOME": str(tmp_path), "RAY_NUM_REDIS_GET_RETRIES": "2"}
    code = f"import ray; ray.init(address='{head.address}'); print(ray.cluster_resources())"
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=120)  # fmt: skip


@pytest.mark.slow
def test_the_cluster_listens_on_loopback_only_and_refuses_a_client_without_the_token(
    head, tmp_path
):
    sockets = listening(own_processes(head.temp))
    assert ("127.0.0.1", int(head.address.rsplit(":", 1)[1])) in {
        (host.removeprefix("::ffff:"), port) for host, port in sockets}  # fmt: skip
    assert {host for host, _ in sockets} <= set(LOOPBACK), sorted(sockets)

    without = connects(head, tmp_path)
    assert without.returncode != 0
    assert "InvalidAuthToken: Authentication token is missing or incorrect" in without.stderr
    wrong = connects(head, tmp_path, RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=secrets.token_hex(32))
    assert wrong.returncode != 0
    assert "InvalidAuthToken" in wrong.stderr
    right = connects(
        head, tmp_path, RAY_AUTH_MODE="token", RAY_AUTH_TOKEN_PATH=str(head.token_file)
    )
    assert right.returncode == 0, right.stderr
    assert "'CPU': 2.0" in right.stdout


def files_holding_text(directory: Path, word: str) -> str:
    """The text of the files under the directory whose name contains the word, joined."""
    return "".join(path.read_text(errors="replace") for path in directory.rglob(f"*{word}*")
                   if path.is_file())  # fmt: skip


def running_job_pids(database: Path) -> list[int]:
    """The pid tags of the job runs (those with a run_key) that are RUNNING in the store."""
    if not database.exists():
        return []
    query = ("select pid.value from runs join tags pid on pid.run_uuid = runs.run_uuid "
             "join tags key on key.run_uuid = runs.run_uuid where runs.status = 'RUNNING' "
             "and pid.key = 'pid' and key.key = 'run_key'")  # fmt: skip
    try:
        with sqlite3.connect(database) as connection:
            return [int(pid) for (pid,) in connection.execute(query)]
    except sqlite3.OperationalError:
        return []  # the schema is still being created


@pytest.mark.slow
def test_a_ray_worker_killed_with_sigkill_costs_a_retry_not_a_run(cli_runs, with_token, tmp_path):
    database = tmp_path / "mlflow.db"
    env = {**os.environ, "MLFLOW_TRACKING_URI": f"sqlite:///{database}"}
    command = [sys.executable, "-m", "experiments.run", *on_ray(with_token, *SLOW_SWEEP),
               f"hydra.sweep.dir={tmp_path / 'multirun'}"]  # fmt: skip
    sweep = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)  # fmt: skip
    deadline = time.monotonic() + 300
    while not running_job_pids(database) and sweep.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(0.5)  # the job is loading its data or fitting
    [victim, *_] = running_job_pids(database)
    assert psutil.Process(victim) in own_processes(with_token.temp), "not a worker of the test"
    os.kill(victim, signal.SIGKILL)
    stdout, stderr = sweep.communicate(timeout=600)
    assert sweep.returncode == 0, stderr

    runs = cli_runs("killed")
    assert {run.info.status for run in runs} == {"FINISHED", "FAILED"}  # none RUNNING
    ok = [run for run in runs if run.data.tags.get("status") == "ok"]
    assert sorted(run.data.tags["run_key"] for run in ok) == sorted(
        {run.data.tags["run_key"] for run in runs}) and len(ok) == 2  # fmt: skip
    [killed] = [run for run in runs if run.data.tags.get("status") != "ok"]
    assert killed.data.tags["pid"] == str(victim) and killed.info.status == "FAILED"
    assert killed.data.tags["error"].startswith(f"orphaned: the process is gone: pid {victim} ")
    assert stderr.strip().splitlines()[-1].split(" s: ")[1] == (
        "2 ok, 0 skipped, 0 failed, 0 resumed, 1 orphaned"
    )


@pytest.mark.slow
def test_a_local_cluster_of_the_sweep_listens_on_loopback_only_and_keeps_its_token(
    cli_runs, short_temp, tmp_path
):
    temp = short_temp / "t"
    home = tmp_path / "home"  # where Ray 2.60 would write a token file readable by all
    numba_cache = os.environ.get("NUMBA_CACHE_DIR") or str(
        Path.home() / ".cache" / "ensembles-lab" / "numba")  # fmt: skip
    env = {name: value for name, value in os.environ.items() if not name.startswith("RAY_")}
    env |= {"MLFLOW_TRACKING_URI": f"sqlite:///{tmp_path / 'mlflow.db'}", "HOME": str(home),
            "NUMBA_CACHE_DIR": numba_cache}  # fmt: skip
    command = [sys.executable, "-m", "experiments.run", *SMALL_SWEEP, "hydra/launcher=ray",
               "+hydra.launcher.ray.init.num_cpus=2", "mlflow.experiment_name=local",
               f"+hydra.launcher.ray.init._temp_dir={temp}",
               f"hydra.sweep.dir={tmp_path / 'multirun'}"]  # fmt: skip
    sweep = psutil.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)  # fmt: skip
    cluster, sockets, tokens = {}, set(), set()
    while sweep.poll() is None:
        try:
            family = sweep.children(recursive=True)
        except psutil.NoSuchProcess:
            break
        cluster |= {process.pid: process for process in family}
        sockets |= listening(family)
        for process in family:
            try:
                tokens.add(process.environ().get("RAY_AUTH_TOKEN"))
            except psutil.Error:
                pass
        time.sleep(0.5)
    stdout, stderr = sweep.communicate(timeout=60)
    _, left = psutil.wait_procs(list(cluster.values()), timeout=30)
    stop(left)
    assert left == [], "the sweep left Ray processes running"
    assert sweep.returncode == 0, stderr
    assert counts(subprocess.CompletedProcess(command, 0, stdout, stderr)) == (
        "2 ok, 0 skipped, 0 failed, 0 resumed, 0 orphaned")  # fmt: skip
    assert len(cli_runs("local")) == 2
    assert len(sockets) >= 5, sorted(sockets)  # GCS, raylet, agents, workers
    assert {host for host, _ in sockets} <= set(LOOPBACK), sorted(sockets)
    [token] = tokens - {None}  # one token, in the cluster's environment only
    assert not (home / ".ray").exists()
    holding = files_holding(token, temp, tmp_path)
    assert holding == [], f"the token found in {holding}"
    assert token not in stdout + stderr
