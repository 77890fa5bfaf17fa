"""The environment is the lock's: installed versions equal requirements/*.lock, a run's tags
say which environment produced it, and a modified one is marked."""

import hashlib

import pytest

from experiments import environment
from experiments.environment import (
    ENGINE_LIBRARIES,
    LOCK_FILE,
    environment_tags,
    installed_version,
    lock_tag,
    locked_versions,
)
from experiments.paths import PROJECT_ROOT

TEAM_LOCK = PROJECT_ROOT / "requirements" / "team.lock"


@pytest.mark.parametrize("name", [*ENGINE_LIBRARIES, "optuna", "hydra-core"])
def test_an_installed_reference_is_the_locked_version(name):
    """make test installs from the team lock: an upgrade that changes parity results must come
    through `make lock`, never by accident."""
    assert installed_version(name) == locked_versions(TEAM_LOCK)[name]


def test_the_sweep_lock_pins_what_the_team_lock_pins():
    team = locked_versions(TEAM_LOCK)
    assert all(team[name] == version for name, version in locked_versions(LOCK_FILE).items())


def test_a_lock_file_is_read_with_markers_hashes_and_comments(tmp_path):
    lock = tmp_path / "example.lock"
    lock.write_text(
        "# generated\n"
        "Scikit_Learn==1.9.1 \\\n    --hash=sha256:00ff\n    # via example\n"
        "numpy==2.4.6 ; python_full_version < '3.12' \\\n    --hash=sha256:11ee\n"
    )
    assert locked_versions(lock) == {"scikit-learn": "1.9.1", "numpy": "2.4.6"}


def test_the_lock_tag_is_the_lock_hash_and_says_when_the_environment_differs(monkeypatch):
    digest = hashlib.sha256(LOCK_FILE.read_bytes()).hexdigest()[:12]
    assert lock_tag() == digest  # every package of the lock is installed at its version
    real = environment.installed_version
    monkeypatch.setattr(environment, "installed_version",
                        lambda name: "9.9.9" if name == "xgboost" else real(name))
    assert lock_tag() == f"{digest}+modified (xgboost 9.9.9)"
    assert lock_tag(PROJECT_ROOT / "no.lock") == "none"


def test_the_environment_tags_name_python_the_os_the_cpu_and_the_lock():
    tags = environment_tags()
    assert {"version.python", "env.os", "env.cpu", "env.lock", "version.numba"} <= tags.keys()
    assert all(tags.values())
