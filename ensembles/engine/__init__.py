"""The numba tree engine: arrays in, arrays out. It knows nothing of scikit-learn.

numba's on-disk cache is invalidated only when a kernel's own file changes, not when a kernel
it calls (and has inlined) changes in another file; a stale entry then runs old machine code,
which can crash. So the cache lives in a directory named after a hash of all engine sources:
any change to the engine starts a fresh cache. NUMBA_CACHE_DIR, if set, is the parent.
"""

import hashlib
import os
from pathlib import Path

import numba


def _engine_cache_dir() -> Path:
    sources = sorted(Path(__file__).parent.glob("*.py"))
    digest = hashlib.sha256(b"".join(path.read_bytes() for path in sources)).hexdigest()[:16]
    parent = os.environ.get("NUMBA_CACHE_DIR") or Path.home() / ".cache" / "ensembles-lab" / "numba"
    return Path(parent) / f"engine-{digest}"


numba.config.CACHE_DIR = str(_engine_cache_dir())
