"""A sweep's jobs on a Ray cluster (Hydra's Ray launcher: hydra/launcher=ray). Ray's workers
are started by `ray start` on each node, not by the sweep, so they do not inherit its
environment: the sweep connects to the cluster before the launcher does, with the variables a
job reads (the sweep's parent run and journal, the store's URI and HTTP settings, the lab's
and numba's) in the job's runtime_env, and each Ray worker compiles the engine
(ensembles.warm) when it starts, before any job.

Ray writes a runtime_env in cleartext to its session logs and shows it in the dashboard's job
and task APIs: only the variables of `forwarded` go there, never a name like SECRET_NAME; each
node's credentials come from the environment of its own `ray start` (docs/security.md, "Ray").
A cluster on this machine only listens on 127.0.0.1 (ONE_NODE)."""

import os
import re
import secrets
import sys
from collections.abc import Mapping

from omegaconf import DictConfig, OmegaConf

FORWARDED_PREFIXES = ("EXPERIMENTS_", "ENSEMBLES_", "NUMBA_", "MLFLOW_HTTP_")
FORWARDED_NAMES = frozenset({"MLFLOW_TRACKING_URI", "MLFLOW_TRACKING_INSECURE_TLS",
                             "MLFLOW_TRACKING_SERVER_CERT_PATH",
                             "MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR"})  # fmt: skip
SECRET_NAME = re.compile(r"PASSWORD|PASSWD|TOKEN|SECRET|KEY|CREDENTIAL|AUTH", re.IGNORECASE)
# Ray 2.60 listens on every interface unless the node's IP is 127.0.0.1, and `ray start` and
# ray.init replace 127.0.0.1 by the machine's routable IP unless Ray runs as a one-node cluster
# (ray_constants.ENABLE_RAY_CLUSTER, read when ray is imported): then every port is on
# 127.0.0.1 (measured in tests/experiments/test_ray_launcher.py).
ONE_NODE = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
WORKER_SETUP = "ensembles.warm.compile_once"  # the worker's first job then finds it done
LAUNCHER_MODULE = "hydra_plugins.hydra_ray_launcher"


def launches_on_ray(config: DictConfig) -> bool:
    """Whether the sweep's launcher is Hydra's Ray launcher."""
    return str(config.hydra.launcher.get("_target_", "")).startswith(LAUNCHER_MODULE)


def forwarded(environ: Mapping[str, str]) -> dict[str, str]:
    """The variables of `environ` a job reads: FORWARDED_NAMES and FORWARDED_PREFIXES, but no
    name that looks like a secret (SECRET_NAME)."""
    return {name: value for name, value in environ.items()
            if (name in FORWARDED_NAMES or name.startswith(FORWARDED_PREFIXES))
            and not SECRET_NAME.search(name)}  # fmt: skip


def on_loopback(address: str | None) -> bool:
    """Whether the sweep starts a local cluster (address None or 'local') or joins one on a
    loopback address."""
    return starts_a_cluster(address) or str(address).rsplit(":", 1)[0] in LOOPBACK_HOSTS


def starts_a_cluster(address: str | None) -> bool:
    """Whether ray.init starts a new local cluster rather than joining one."""
    return address in (None, "local")


def require_a_private_token() -> None:
    """Unless RAY_AUTH_MODE is set, a new local cluster requires a random token that lives only
    in this process's environment and its children's (Ray 2.60 would otherwise write one to
    ~/.ray/auth_token, readable by every user who can read the home directory)."""
    if "RAY_AUTH_MODE" not in os.environ:
        os.environ["RAY_AUTH_MODE"] = "token"
        os.environ["RAY_AUTH_TOKEN"] = secrets.token_hex(32)


def connect(config: DictConfig) -> None:
    """ray.init with the launcher's `hydra.launcher.ray.init` settings (address: a running
    cluster, e.g. host:port; None: a local one, with a private token), on 127.0.0.1 when the
    cluster is local or its address is (ONE_NODE), and runtime_env.env_vars extended by this
    process's forwarded variables, and the worker setup hook WORKER_SETUP unless one is
    given; the launcher then finds Ray initialized and submits every job there. A
    secret-looking name in the configured env_vars is left out, saying so. The workers' log
    lines stay in Ray's logs (the session directory, `ray logs`): the sweep prints its summary
    line, and each job's run holds its status and error."""
    init = OmegaConf.to_container(config.hydra.launcher.ray.init, resolve=True)
    if on_loopback(init.get("address")):
        os.environ.update(ONE_NODE)  # read when ray is imported
    if starts_a_cluster(init.get("address")):
        require_a_private_token()
    import ray  # the team extra

    runtime_env = dict(init.pop("runtime_env", None) or {})
    configured = runtime_env.get("env_vars", {})
    withheld = sorted(name for name in configured if SECRET_NAME.search(name))
    if withheld:
        print(f"sweep: not passed to Ray, which logs a runtime_env in cleartext: "
              f"{', '.join(withheld)} (set them where `ray start` runs, docs/security.md)",
              file=sys.stderr)  # fmt: skip
    runtime_env["env_vars"] = {**forwarded(os.environ),
                               **{name: value for name, value in configured.items()
                                  if name not in withheld}}  # fmt: skip
    runtime_env.setdefault("worker_process_setup_hook", WORKER_SETUP)
    ray.init(**init, runtime_env=runtime_env, log_to_driver=False)
