"""A sweep's jobs on a Ray cluster (Hydra's Ray launcher: hydra/launcher=ray). Ray's workers
are started by `ray start` on each node, not by the sweep, so they do not inherit its
environment: the sweep connects to the cluster before the launcher does, with the variables a
job reads (the sweep's parent run, MLflow's and the lab's settings, numba's) in the job's
runtime_env, and each Ray worker compiles the engine (ensembles.warm) when it starts, before
any job."""

import os

from omegaconf import DictConfig, OmegaConf

FORWARDED_PREFIXES = ("EXPERIMENTS_", "MLFLOW_", "NUMBA_")
WORKER_SETUP = "ensembles.warm.compile_once"  # the worker's first job then finds it done
LAUNCHER_MODULE = "hydra_plugins.hydra_ray_launcher"


def launches_on_ray(config: DictConfig) -> bool:
    """Whether the sweep's launcher is Hydra's Ray launcher."""
    return str(config.hydra.launcher.get("_target_", "")).startswith(LAUNCHER_MODULE)


def connect(config: DictConfig) -> None:
    """ray.init with the launcher's `hydra.launcher.ray.init` settings (address: a running
    cluster, e.g. auto or host:port; None: a local one) and runtime_env.env_vars extended by
    this process's EXPERIMENTS_*, MLFLOW_* and NUMBA_* variables, and the worker setup hook
    WORKER_SETUP unless one is given; the launcher then finds Ray initialized and submits every
    job there. The workers' log lines stay in Ray's logs (the session directory, `ray logs`):
    the sweep prints its summary line, and each job's run holds its status and error."""
    import ray  # the team extra

    init = OmegaConf.to_container(config.hydra.launcher.ray.init, resolve=True)
    runtime_env = dict(init.pop("runtime_env", None) or {})
    forwarded = {name: value for name, value in os.environ.items()
                 if name.startswith(FORWARDED_PREFIXES)}  # fmt: skip
    runtime_env["env_vars"] = {**forwarded, **runtime_env.get("env_vars", {})}
    runtime_env.setdefault("worker_process_setup_hook", WORKER_SETUP)
    ray.init(**init, runtime_env=runtime_env, log_to_driver=False)
