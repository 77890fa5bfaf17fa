"""The numba cache's directory (ensembles.engine._engine_cache_dir) follows every source a
cached kernel may have inlined: a kernel's entry is invalidated only by its own file, so the
directory changes with the engine and with any other module that compiles kernels (the
losses', called by the compiled boosting rounds), and not with a module without kernels."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import ensembles

PACKAGE = Path(ensembles.__file__).parent
PRINT_CACHE_DIR = "import numba, ensembles.engine; print(numba.config.CACHE_DIR)"


def _cache_dir(root: Path) -> str:
    env = {**os.environ, "PYTHONPATH": str(root), "NUMBA_CACHE_DIR": str(root / "cache")}
    return subprocess.run([sys.executable, "-c", PRINT_CACHE_DIR], env=env, cwd=root,
                          check=True, capture_output=True, text=True).stdout.strip()


def test_the_cache_directory_changes_with_every_source_of_kernels(tmp_path):
    shutil.copytree(PACKAGE, tmp_path / "ensembles",
                    ignore=shutil.ignore_patterns("__pycache__"))
    before = _cache_dir(tmp_path)
    assert before.startswith(str(tmp_path / "cache" / "engine-"))
    for module in ("methods/gbt.py", "methods/boosting.py"):  # Python only: the same cache
        with open(tmp_path / "ensembles" / module, "a") as source:
            source.write("\n")
    assert _cache_dir(tmp_path) == before
    seen = {before}
    for module in ("losses.py", "methods/newton_rounds.py", "engine/splitting.py"):
        with open(tmp_path / "ensembles" / module, "a") as source:
            source.write("\n")
        seen.add(_cache_dir(tmp_path))
    assert len(seen) == 4
