"""The environment a run was produced in, as tags: the versions of the engines' libraries and
of Python, the OS and the CPU model, and the lock file the environment was installed from
(requirements/sweep.lock: its hash, marked modified when an installed version differs)."""

import hashlib
import importlib.metadata
import platform
from functools import cache
from pathlib import Path

from packaging.utils import canonicalize_name

from experiments.paths import PROJECT_ROOT

ENGINE_LIBRARIES = ("numba", "numpy", "scipy", "scikit-learn", "xgboost", "lightgbm", "mlflow")
LOCK_FILE = PROJECT_ROOT / "requirements" / "sweep.lock"
ENVIRONMENT_TAGS = ("env.lock", "env.cpu", "env.os", "version.python")  # report: mixed?


def locked_versions(lock: Path = LOCK_FILE) -> dict[str, str]:
    """Package (canonical name) -> version of each `name==version` line of a lock file."""
    versions = {}
    for line in lock.read_text().splitlines():
        requirement = line.split(";")[0].strip().rstrip("\\").strip()
        if "==" in requirement and not requirement.startswith(("#", "-")):
            name, version = requirement.split("==")
            versions[canonicalize_name(name)] = version.strip()
    return versions


def installed_version(name: str) -> str | None:
    """The installed version of a package, None if it is not installed."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def lock_tag(lock: Path = LOCK_FILE) -> str:
    """The first 12 hex digits of the lock file's sha256; `<hash>+modified (xgboost 3.3.0, ...)`
    when installed versions differ from it; `none` without a lock file."""
    if not lock.exists():
        return "none"
    digest = hashlib.sha256(lock.read_bytes()).hexdigest()[:12]
    differing = [f"{name} {installed_version(name) or 'missing'}"
                 for name, version in locked_versions(lock).items()
                 if installed_version(name) != version]  # fmt: skip
    if not differing:
        return digest
    return f"{digest}+modified ({', '.join(differing)})"[:250]  # MLflow's tag value limit


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo (Linux), else what platform knows."""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


@cache
def environment_tags() -> dict[str, str]:
    """version.<library> of ENGINE_LIBRARIES and version.python, env.os, env.cpu, env.lock;
    computed once per process."""
    tags = {f"version.{name}": installed_version(name) or "missing" for name in ENGINE_LIBRARIES}
    tags["version.python"] = platform.python_version()
    tags["env.os"] = platform.platform()
    tags["env.cpu"] = cpu_model()
    tags["env.lock"] = lock_tag()
    return tags
