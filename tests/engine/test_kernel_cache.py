"""numba's cache of the package's kernels (ensembles.engine.kernel_cache): its directory follows
every source a cached kernel may have inlined (a kernel's entry is invalidated only by its own
file), so it changes with the engine and with any other module that compiles kernels (the
losses', called by the compiled boosting rounds), not with a module without kernels; and a
kernel compiled by one checkout is loaded by another checkout of the same sources at another
path."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numba
import pytest
from numba.core.registry import CPUDispatcher

import ensembles
from ensembles.engine.kernel_cache import (
    PackageLocator,
    engine_cache_dir,
    first_writable,
    writable_directory,
)

PACKAGE = Path(ensembles.__file__).parent
PRINT_CACHE_DIR = ("from ensembles.engine.kernel_cache import engine_cache_dir; "
                   "print(engine_cache_dir())")
# a small kernel: compiling it takes about a second
CALL_A_KERNEL = """
import json
from ensembles.engine.bootstrap import _drawn_counts
_drawn_counts(3, 10, 10)
stats = _drawn_counts.stats
print(json.dumps({"cache_path": stats.cache_path, "hits": len(stats.cache_hits),
                  "misses": len(stats.cache_misses)}))
"""


def _copy_package(root: Path) -> Path:
    shutil.copytree(PACKAGE, root / "ensembles", ignore=shutil.ignore_patterns("__pycache__"))
    return root


def _run(root: Path, program: str, cache: Path, **environment: str) -> str:
    return _process(root, program, cache, **environment).stdout.strip().splitlines()[-1]


def _process(root: Path, program: str, cache: Path, **environment: str):
    env = {**os.environ, "PYTHONPATH": str(root), "NUMBA_CACHE_DIR": str(cache), **environment}
    return subprocess.run([sys.executable, "-c", program], env=env, cwd=root, check=True,
                          capture_output=True, text=True)


def _cache_files_in(root: Path) -> list[Path]:
    return [*root.rglob("*.nbi"), *root.rglob("*.nbc")]


def test_the_cache_directory_changes_with_every_source_of_kernels(tmp_path):
    root = _copy_package(tmp_path)
    before = _run(root, PRINT_CACHE_DIR, tmp_path / "cache")
    assert before.startswith(str(tmp_path / "cache" / "engine-"))
    for module in ("methods/gbt.py", "methods/boosting.py"):  # Python only: the same cache
        with open(root / "ensembles" / module, "a") as source:
            source.write("\n")
    assert _run(root, PRINT_CACHE_DIR, tmp_path / "cache") == before
    seen = {before}
    for module in ("losses.py", "methods/newton_rounds.py", "engine/splitting.py"):
        with open(root / "ensembles" / module, "a") as source:
            source.write("\n")
        seen.add(_run(root, PRINT_CACHE_DIR, tmp_path / "cache"))
    assert len(seen) == 4


def test_a_kernel_compiled_by_one_checkout_is_loaded_by_another_at_another_path(tmp_path):
    """Two copies of the package (a fresh clone, a worktree, another node's checkout), each
    file written anew, one NUMBA_CACHE_DIR: the second loads what the first compiled; an edit
    of the kernel's file in the second compiles it again."""
    first, second = (_copy_package(tmp_path / name) for name in ("first", "second"))
    cache = tmp_path / "cache"
    compiled = json.loads(_run(first, CALL_A_KERNEL, cache))
    assert (compiled["hits"], compiled["misses"]) == (0, 1)
    loaded = json.loads(_run(second, CALL_A_KERNEL, cache))
    assert (loaded["hits"], loaded["misses"]) == (1, 0)
    assert loaded["cache_path"] == compiled["cache_path"]
    assert Path(compiled["cache_path"]).parent.parent == cache
    assert Path(compiled["cache_path"]).name == "ensembles.engine"
    with open(second / "ensembles" / "engine" / "bootstrap.py", "a") as source:
        source.write("\n")
    edited = json.loads(_run(second, CALL_A_KERNEL, cache))
    assert (edited["hits"], edited["misses"]) == (0, 1)
    assert edited["cache_path"] != compiled["cache_path"]


def test_every_kernel_of_the_package_is_cached_under_its_package_in_the_engine_directory():
    """The locator is chosen when a kernel is decorated: every cached kernel of every module of
    the package sits in engine_cache_dir() under its module's package, none in a __pycache__
    of the checkout or under numba's hash of an absolute path."""
    import ensembles.warm  # noqa: F401  (every module with kernels)

    kernels = {f"{name}.{attribute}": value for name, module in list(sys.modules.items())
               if name.startswith("ensembles") for attribute, value in vars(module).items()
               if isinstance(value, CPUDispatcher) and value.stats.cache_path}
    assert {"ensembles.losses._logistic_stats", "ensembles.class_choice._first_near_max",
            "ensembles.methods.newton_rounds.grow_newton_rounds",
            "ensembles.engine.tree.tree_fields"} <= kernels.keys()
    for name, kernel in kernels.items():
        package = Path(kernel.py_func.__code__.co_filename).resolve().parent
        expected = engine_cache_dir() / ".".join(package.relative_to(PACKAGE.parent).parts)
        assert Path(kernel.stats.cache_path) == expected, name


def test_kernels_of_other_packages_are_left_to_numbas_own_locators():
    def outside():
        return 1

    assert PackageLocator.from_function(outside, numba.__file__) is None


def test_an_unwritable_cache_directory_gives_way_to_the_users_own_not_the_checkout(tmp_path):
    """numba uses a cache directory only if it can write it, and would fall back to the
    checkout's __pycache__, where an entry outlives an edit of a kernel it inlined. A
    NUMBA_CACHE_DIR that cannot be a directory (a file: unwritable even for root) gives way,
    with a warning naming it, to ~/.cache/ensembles-lab/numba."""
    root = _copy_package(tmp_path / "checkout")
    not_a_directory = tmp_path / "a-file"
    not_a_directory.write_text("")
    done = _process(root, CALL_A_KERNEL, not_a_directory, HOME=str(tmp_path / "home"))
    cache_path = Path(json.loads(done.stdout.strip().splitlines()[-1])["cache_path"])
    assert cache_path.is_relative_to(tmp_path / "home" / ".cache" / "ensembles-lab" / "numba")
    assert f"numba cannot write its cache in {not_a_directory}" in done.stderr
    assert _cache_files_in(root) == []


def test_no_writable_cache_directory_is_an_error_naming_each_one_tried(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(RuntimeError, match="a-file/first, .*a-file/second"):
        first_writable([blocker / "first", blocker / "second"])


def test_a_users_locators_and_cache_directory_stay_theirs(tmp_path):
    """NUMBA_CACHE_LOCATOR_CLASSES set by a user still has the package's kernels in the
    engine's directory (PackageLocator first, their locators for other kernels), and numba's
    CACHE_DIR, where a user's own kernels go, is left as they set it."""
    root = _copy_package(tmp_path / "checkout")
    cache = tmp_path / "cache"
    program = CALL_A_KERNEL.replace("print(json.dumps({", "import numba\nprint(json.dumps({"
                                    "'cache_dir': numba.config.CACHE_DIR, "
                                    "'locators': numba.config.CACHE_LOCATOR_CLASSES, ")
    seen = json.loads(_run(root, program, cache, NUMBA_CACHE_LOCATOR_CLASSES="InTreeCacheLocator"))
    assert Path(seen["cache_path"]).parent.parent == cache
    assert seen["locators"] == "ensembles.engine.kernel_cache.PackageLocator,InTreeCacheLocator"
    assert seen["cache_dir"] == str(cache)
    assert _cache_files_in(root) == []


@pytest.mark.skipif(os.getuid() != 0, reason="giving a directory to another user needs root")
def test_a_temp_directory_another_user_owns_is_not_used(tmp_path):
    """The last fallback sits in the shared temp directory: a directory there that another
    user made (and could fill with machine code) is passed over; pytest's tmp_path is in it."""
    assert writable_directory(tmp_path / "mine" / "engine-x")
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    os.chown(theirs, 12345, 12345)
    assert not writable_directory(theirs / "engine-x")
