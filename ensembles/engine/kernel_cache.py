"""Where numba's on-disk cache keeps the package's compiled kernels, so that a kernel compiled
once is loaded by every checkout of the same sources on a CPU of the same model: a fresh
clone, a git worktree, a Ray worker's unpacked working directory, a cluster node's own copy.
Compiling them all takes a minute and more (docs/small_tables.md, "What the cold start
compiles"); loading them, a second or two.

numba keys an entry by the kernel's bytecode, a hash of its file's content and the CPU (model
and features), and files it under a directory of its own named after the absolute path of the
kernel's source directory: the same sources at another path compile again. Two things change
that here:

- the directory: one per hash of every source a cached kernel may have inlined. numba
  invalidates an entry only when its own file changes, not when a kernel it inlined changes in
  another file; a stale entry then runs old machine code, which can crash. So the hash covers
  the engine and every other module of the package that compiles kernels (the losses', which
  the compiled boosting rounds of methods.newton_rounds inline): any change to them starts a
  fresh directory. NUMBA_CACHE_DIR, if set, is its parent (e.g. a directory a team's nodes
  share);
- inside it, a kernel's entries go under its module's place in the package
  (`ensembles.engine`, `ensembles.methods`: PackageLocator), not under its absolute path.
"""

import hashlib
import os
from pathlib import Path

import numba
from numba.core.caching import CacheImpl, UserProvidedCacheLocator

PACKAGE = Path(__file__).resolve().parent.parent


def engine_cache_dir() -> Path:
    """$NUMBA_CACHE_DIR (or ~/.cache/ensembles-lab/numba) / engine-<hash of the sources of
    kernels>."""
    engine = Path(__file__).parent
    sources = sorted({*engine.glob("*.py"), *(path for path in engine.parent.rglob("*.py")
                                              if "njit" in path.read_text())})
    digest = hashlib.sha256(b"".join(path.read_bytes() for path in sources)).hexdigest()[:16]
    parent = os.environ.get("NUMBA_CACHE_DIR") or Path.home() / ".cache" / "ensembles-lab" / "numba"
    return Path(parent) / f"engine-{digest}"


class PackageLocator(UserProvidedCacheLocator):
    """numba's locator of its CACHE_DIR, with a kernel's entries under its module's package
    (`ensembles.engine`) instead of a hash of its absolute directory; another package's kernels
    are left to numba's own locators."""

    @classmethod
    def get_suitable_cache_subpath(cls, py_file: str) -> str:
        return ".".join(Path(py_file).resolve().parent.relative_to(PACKAGE.parent).parts)

    @classmethod
    def from_function(cls, py_func, py_file: str):
        if not Path(py_file).resolve().is_relative_to(PACKAGE):
            return None
        return super().from_function(py_func, py_file)


def use_engine_cache() -> None:
    """Point numba's cache at engine_cache_dir() and put PackageLocator first among its
    locators (unless NUMBA_CACHE_LOCATOR_CLASSES names them). numba picks a kernel's locator
    when the kernel is decorated: this runs before any module of the package defines one
    (ensembles.engine's import)."""
    numba.config.CACHE_DIR = str(engine_cache_dir())
    if not numba.config.CACHE_LOCATOR_CLASSES:
        numba.config.CACHE_LOCATOR_CLASSES = ",".join(
            f"{locator.__module__}.{locator.__qualname__}"
            for locator in (PackageLocator, *CacheImpl._locator_classes))
