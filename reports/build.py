"""Build the report of one MLflow experiment: results.csv, tables.md and tables.tex."""

from pathlib import Path

from reports.render import format_metric_table, to_latex, to_markdown
from reports.runs import ReportError, load_runs, load_split_values, open_experiment
from reports.tables import PRIMARY_METRICS, MetricTable, ok_runs, summarize


def build_report(tracking_uri: str, experiment: str, out_dir: Path) -> list[Path]:
    """Write the report files of `experiment` into `out_dir` and return their paths; raises
    ReportError (and writes nothing) if the experiment is missing or has no ok run."""
    client, experiment_id = open_experiment(tracking_uri, experiment)
    runs = load_runs(client, experiment_id)
    ok = ok_runs(runs)
    tables: list[MetricTable] = []
    for metric in PRIMARY_METRICS:
        if metric in ok.columns and ok[metric].notna().any():
            values = load_split_values(client, ok[ok[metric].notna()], metric)
            tables.append(summarize(values, metric))
    if not tables:
        statuses = runs["status"].fillna("no status").value_counts().sort_index()
        counts = ", ".join(f"{n} {status}" for status, n in statuses.items()) or "no runs"
        raise ReportError(
            f"experiment '{experiment}' in {tracking_uri} has no ok run with "
            f"{' or '.join(PRIMARY_METRICS)} ({counts})"
        )
    text_tables = [format_metric_table(table) for table in tables]
    out_dir.mkdir(parents=True, exist_ok=True)
    outputs = {
        "results.csv": runs.to_csv(index=False),
        "tables.md": to_markdown(text_tables),
        "tables.tex": to_latex(text_tables),
    }
    paths = []
    for name, text in outputs.items():
        path = out_dir / name
        path.write_text(text)
        paths.append(path)
    return paths
