"""Where numba's on-disk cache keeps the package's compiled kernels, so that a kernel compiled
once is loaded by every checkout of the same sources on a CPU of the same model: a fresh
clone, a git worktree, a cluster node's own copy, an image's. Compiling them all takes a
minute and more (docs/small_tables.md, "A cache every checkout shares"); loading them, a
second or two.

numba keys an entry by the kernel's bytecode, a hash of its file's content and the CPU (model
and features), and files it under a directory named after the absolute path of the kernel's
source directory: the same sources at another path compile again. Here, the package's kernels
(and only they: a user's own kernels keep numba's places) are filed by PackageLocator:

- in one directory per hash of every source a cached kernel may have inlined. numba
  invalidates an entry only when its own file changes, not when a kernel it inlined changes in
  another file; a stale entry then runs old machine code, which can crash. So the hash covers
  the engine and every other module of the package that compiles kernels (the losses', which
  the compiled boosting rounds of methods.newton_rounds inline): any change to them starts a
  fresh directory. Its parent is $NUMBA_CACHE_DIR (e.g. a directory a team's nodes share), or
  ~/.cache/ensembles-lab/numba;
- under the kernel's module's package (`ensembles.engine`), not its absolute path;
- never in a checkout's `__pycache__` (numba's fallback when a cache directory cannot be
  written, where the stale entries above would run): numba uses a directory only if it can
  write it, so an unwritable parent gives way, with a warning, to ~/.cache/ensembles-lab/numba,
  then to a directory of this user's own in the temp directory.
"""

import hashlib
import os
import tempfile
import warnings
from functools import cache
from pathlib import Path

import numba
from numba.core.caching import CacheImpl, UserProvidedCacheLocator

PACKAGE = Path(__file__).resolve().parent.parent
USER_CACHE = Path.home() / ".cache" / "ensembles-lab" / "numba"


def sources_digest() -> str:
    """A hash of the engine's sources and of every other module of the package with kernels."""
    engine = Path(__file__).parent
    sources = sorted({*engine.glob("*.py"), *(path for path in engine.parent.rglob("*.py")
                                              if "njit" in path.read_text())})
    return hashlib.sha256(b"".join(path.read_bytes() for path in sources)).hexdigest()[:16]


def writable_directory(path: Path) -> bool:
    """Whether `path` is, or can be made, a directory this process writes into (numba's own
    test of a cache directory) and, in the shared temp directory, one of this user's own down
    from there (no other user could have planted machine code in it)."""
    try:
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
        tempfile.TemporaryFile(dir=path).close()
    except OSError:
        return False
    temp = Path(tempfile.gettempdir())
    own = [directory for directory in (path, *path.parents)
           if directory.is_relative_to(temp) and directory != temp]
    return all(not directory.is_symlink() and directory.stat().st_uid == os.getuid()
               for directory in own)


def first_writable(candidates: list[Path]) -> Path:
    """The first writable_directory of the candidates; a warning naming the ones passed over,
    a RuntimeError naming them all if none is."""
    for index, path in enumerate(candidates):
        if writable_directory(path):
            if index:
                passed_over = ", ".join(map(str, candidates[:index]))
                warnings.warn(f"numba cannot write its cache in {passed_over}; the engine's "
                              f"kernels are cached in {path} instead", stacklevel=2)
            return path
    raise RuntimeError("no writable directory for numba's cache of the engine's kernels (tried "
                       f"{', '.join(map(str, candidates))}); set NUMBA_CACHE_DIR to one")


@cache
def engine_cache_dir() -> Path:
    """<$NUMBA_CACHE_DIR, else ~/.cache/ensembles-lab/numba, else the temp directory's
    ensembles-lab-numba-<uid>>/engine-<sources_digest()>: the first writable one."""
    name = f"engine-{sources_digest()}"
    parents = [Path(os.environ.get("NUMBA_CACHE_DIR") or USER_CACHE).expanduser().absolute(),
               USER_CACHE, Path(tempfile.gettempdir()) / f"ensembles-lab-numba-{os.getuid()}"]
    return first_writable([parent / name for parent in dict.fromkeys(parents)])


class PackageLocator(UserProvidedCacheLocator):
    """numba's locator of a cache directory, for the package's kernels: engine_cache_dir() /
    the kernel's module's package (`ensembles.engine`); other kernels go to numba's own."""

    def __init__(self, py_func, py_file: str):
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        package = Path(py_file).resolve().parent.relative_to(PACKAGE.parent)
        self._cache_path = str(engine_cache_dir() / ".".join(package.parts))

    @classmethod
    def from_function(cls, py_func, py_file: str):
        if not Path(py_file).resolve().is_relative_to(PACKAGE):
            return None
        locator = cls(py_func, py_file)
        locator.ensure_cache_path()  # an OSError, not numba's next locator (the checkout)
        return locator


def use_engine_cache() -> None:
    """Put PackageLocator first among numba's cache locators (before those a user's
    NUMBA_CACHE_LOCATOR_CLASSES names, or numba's). numba picks a kernel's locator when the
    kernel is decorated: this runs before any module of the package defines one
    (ensembles.engine's import)."""
    ours = f"{PackageLocator.__module__}.{PackageLocator.__qualname__}"
    others = [name.strip() for name in numba.config.CACHE_LOCATOR_CLASSES.split(",")
              if name.strip()] or [f"{locator.__module__}.{locator.__qualname__}"
                                   for locator in CacheImpl._locator_classes]
    numba.config.CACHE_LOCATOR_CLASSES = ",".join([ours, *(name for name in others
                                                            if name != ours)])
    engine_cache_dir()
