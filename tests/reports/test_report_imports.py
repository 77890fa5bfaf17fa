"""The reports read MLflow's runs without loading the engine: no numba, no ensembles module
(a report on a laptop, or in a process that must start fast)."""

import subprocess
import sys
from pathlib import Path

import reports

MODULES = sorted(f"reports.{path.relative_to(Path(reports.__file__).parent).with_suffix('')}"
                 .replace("/", ".").removesuffix(".__init__")
                 for path in Path(reports.__file__).parent.rglob("*.py"))  # fmt: skip


def test_no_report_module_loads_the_engine():
    imports = "; ".join(f"import {module}" for module in MODULES)
    check = "import sys; print([m for m in sys.modules if m.startswith(('numba', 'ensembles'))])"
    out = subprocess.run([sys.executable, "-c", f"{imports}; {check}"], capture_output=True,
                         text=True, check=True).stdout  # fmt: skip
    assert len(MODULES) > 10 and out.strip() == "[]"
