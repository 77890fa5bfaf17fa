"""`python -m reports --experiment NAME --out DIR [--tracking-uri URI] [--baseline M/E[/ENC]]
[--sweep RUN_ID|latest]`."""

import argparse
import os
import sys
from pathlib import Path

from experiments.paths import REPORTS_OUT
from experiments.store.uri import CredentialsInURI, tracking_uri
from reports.build import build_report
from reports.runs import ReportError


def main(argv: list[str] | None = None) -> int:
    """Build the report; on a ReportError (or credentials in the tracking URI) print one
    `error: ...` line and return 1."""
    parser = argparse.ArgumentParser(
        prog="python -m reports",
        description="Write results.csv, tables.md, tables.tex and figures/ (PNG and PDF).",
    )
    parser.add_argument("--experiment", default="default", help="MLflow experiment (sweep) name")
    parser.add_argument(
        "--out", type=Path, default=REPORTS_OUT, help="output directory"
    )
    parser.add_argument(
        "--tracking-uri", help="default: env MLFLOW_TRACKING_URI, else the project's mlflow.db"
    )
    parser.add_argument(
        "--baseline",
        metavar="METHOD/ENGINE[/ENCODING]",
        help="column the across-datasets tables compare every other with (default: each table's "
        "column present on most datasets, the first of a tie); "
        "/ENCODING where the tables have a column per categorical encoding",
    )
    parser.add_argument(
        "--sweep",
        metavar="RUN_ID|latest",
        help="only the runs one sweep logged: its parent run's id, or latest (default: all)",
    )
    args = parser.parse_args(argv)
    os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")  # margins.csv reads
    try:
        paths = build_report(
            tracking_uri(args.tracking_uri), args.experiment, args.out, args.baseline, args.sweep
        )
    except (ReportError, CredentialsInURI) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    for path in paths:
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
