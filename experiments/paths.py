"""Where the project's own files are: its root, the Hydra configs, the report outputs."""

from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[1]
CONF_DIR = PROJECT_ROOT / "conf"
REPORTS_OUT = PROJECT_ROOT / "reports" / "out"
