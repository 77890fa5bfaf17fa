"""Tables and figures of an MLflow experiment; reads MLflow only, never the engine."""

from reports.build import build_report
from reports.runs import ReportError

__all__ = ["ReportError", "build_report"]
