"""Build the report of one MLflow experiment: results.csv, verdicts.csv, tables.md, tables.tex
and figures/."""

import sys
from pathlib import Path

import pandas as pd
from mlflow import MlflowClient

from reports.across import against_baseline, default_baseline
from reports.analyses.bias_variance import bias_variance_tables
from reports.analyses.diversity import diversity_tables
from reports.analyses.margins import boosted_methods, margin_figure
from reports.datasets import datasets_table
from reports.esl import BOOSTED, ESL_CURVE, esl_datasets, esl_figure
from reports.failures import failures, left_out_values
from reports.fht import (
    ALGORITHMS,
    FHT_CURVE,
    MULTICLASS_PARAM,
    TREE_SIZE_PARAM,
    algorithm_key,
    fht_datasets,
    fht_figure,
    fht_table,
    mean_curves,
    terminal_nodes,
)
from reports.figures import CURVE_PREFIX, cd_diagram, learning_curves
from reports.figures import save as save_figure
from reports.render import (
    format_across,
    format_failures,
    format_friedman_table,
    format_metric_table,
    format_parity_table,
    format_timing_table,
    format_verdict_counts,
    to_latex,
    to_markdown,
)
from reports.runs import (
    ReportError,
    load_curves,
    load_margins,
    load_params,
    load_runs,
    load_split_values,
    load_trials,
    log_report_run,
    method_option,
    open_experiment,
    sweep_run_id,
)
from reports.stats import complete_means, friedman_nemenyi, ranking_block
from reports.tables import (
    TABLE_METRICS,
    MetricTable,
    approximations,
    left_out_line,
    mixed_environments_line,
    ok_runs,
    parity,
    row_resamples,
    split_sizes_of_runs,
    summarize,
    tabled_metrics,
    timing,
)
from reports.tuning import (
    across_datasets,
    best_so_far_curves,
    best_so_far_figure,
    best_so_far_time_figure,
    default_vs_tuned,
    format_across_datasets,
    format_default_vs_tuned,
    format_tunability,
    format_tuning_cost,
    tunability,
    tuning_cost,
)
from reports.verdicts import verdict_counts, verdicts, write_csv

VERDICTS_CSV = "verdicts.csv"


def parse_baseline(baseline: str | None, tables: list[MetricTable]) -> tuple[str, ...] | None:
    """`METHOD/ENGINE` (`METHOD/ENGINE/ENCODING` where the encoding is a column key,
    reports.tables.column_keys) as a column present in some table; None for the default (each
    table's first column). Raises ReportError naming the columns there are."""
    if baseline is None:
        return None
    columns = sorted({column for table in tables for column in table.mean.columns})
    column = tuple(part.strip() for part in baseline.split("/"))
    if column not in columns:
        choices = ", ".join("/".join(choice) for choice in columns)
        raise ReportError(f"unknown baseline '{baseline}'; choose one of: {choices}")
    return column


def build_report(
    tracking_uri: str,
    experiment: str,
    out_dir: Path,
    baseline: str | None = None,
    sweep: str | None = None,
) -> list[Path]:
    """Write the report of an experiment (what `make report` writes): its tables and figures.

    Parameters
    ----------
    tracking_uri : str
        The MLflow store: a sqlite URI or a tracking server's URL.
    experiment : str
        The experiment's name.
    out_dir : Path
        Where the report's files go.
    baseline : str, optional
        `METHOD/ENGINE[/ENCODING]`, the column the others are compared with.
    sweep : str, optional
        Only the runs one sweep logged: its sweep run's id, or `latest`.

    Returns
    -------
    list of Path
        The files written; the figures are also logged to a `report` run of the experiment.

    Raises
    ------
    ReportError
        Before anything is written: the experiment or the sweep is missing, there is no ok
        run, or `baseline` is not one of the report's columns.
    """
    client, experiment_id = open_experiment(tracking_uri, experiment)
    runs = load_runs(client, experiment_id)
    if sweep is not None:
        chosen_sweep = sweep_run_id(client, experiment_id, sweep)
        runs = runs[runs.reindex(columns=["sweep_id"])["sweep_id"] == chosen_sweep]
    ok = ok_runs(runs)
    print(left_out_line(runs, ok))
    mixed = mixed_environments_line(ok)
    if mixed:
        print(mixed, file=sys.stderr)
    tables: list[MetricTable] = []
    sizes, left_out = split_sizes_of_runs(ok), [failures(runs)]
    for metric in tabled_metrics(ok):
        # the runs of the datasets the metric applies to: a run whose mean is NaN (one NaN
        # split) still gives its other splits
        applies = ok["dataset"].isin(ok.loc[ok[metric].notna(), "dataset"])
        values = load_split_values(client, ok[applies], metric)
        kept, dropped = row_resamples(values.join(sizes, on="run_id"))
        tables.append(summarize(kept, metric))
        left_out.append(left_out_values(dropped, metric))
    if not tables:
        statuses = runs["status"].fillna("no status").value_counts().sort_index()
        counts = ", ".join(f"{n} {status}" for status, n in statuses.items()) or "no runs"
        raise ReportError(
            f"experiment '{experiment}' in {tracking_uri} has no ok run with "
            f"{' or '.join(TABLE_METRICS)} ({counts})"
        )
    chosen = parse_baseline(baseline, tables)
    found = [verdicts(table) for table in tables]
    text_tables, friedman_results = across_tables(tables, chosen), []
    for table in tables:
        result = friedman_nemenyi(table)
        if result is not None:
            friedman_results.append(result)
    if friedman_results:
        text_tables.append(format_friedman_table(friedman_results))
    text_tables += [format_metric_table(table, rows, ranking_block(complete_means(table)),
                                        approximations(ok, table.keys))
                    for table, rows in zip(tables, found, strict=True)]  # fmt: skip
    text_tables += [format_verdict_counts(verdict_counts(rows), table.metric)
                    for table, rows in zip(tables, found, strict=True)]  # fmt: skip
    text_tables.append(format_failures(pd.concat(left_out, ignore_index=True)))
    text_tables.append(format_timing_table(timing(ok)))
    parity_table = parity(ok)
    if not parity_table.empty:
        text_tables.append(format_parity_table(parity_table))
    text_tables += bias_variance_tables(ok) + diversity_tables(ok)
    cost = tuning_cost(ok)
    if not cost.empty:
        text_tables.append(format_tuning_cost(cost))
    for table in tables:
        comparison = default_vs_tuned(table)
        if not comparison.empty:
            text_tables.append(format_default_vs_tuned(comparison, table.metric))
            text_tables.append(format_across_datasets(across_datasets(comparison), table.metric))
        tunabilities = tunability(ok, table.metric)
        if not tunabilities.empty:
            text_tables.append(format_tunability(tunabilities, table.metric))

    fht_means = {dataset: mean for dataset in fht_datasets(ok)
                 if not (mean := fht_mean_curves(client, ok, dataset)).empty}  # fmt: skip
    text_tables += [fht_table(mean, dataset) for dataset, mean in fht_means.items()]

    out_dir.mkdir(parents=True, exist_ok=True)
    outputs = {
        "results.csv": runs.to_csv(index=False),
        "tables.md": to_markdown(text_tables),
        "tables.tex": to_latex(text_tables),
    }
    described = datasets_table(ok)
    if described is not None:
        outputs |= {"datasets.md": to_markdown([described]),
                    "datasets.tex": to_latex([described])}  # fmt: skip
    paths = [out_dir / VERDICTS_CSV]
    write_csv(found, paths[0])
    for name, text in outputs.items():
        path = out_dir / name
        path.write_text(text)
        paths.append(path)

    figures_dir = out_dir / "figures"
    figure_paths = []
    for result in (result for result in friedman_results if result.claims):
        figure_paths += save_figure(cd_diagram(result), figures_dir / f"cd_{result.metric}")
    for metric in sorted(c for c in ok.columns if c.startswith(CURVE_PREFIX)):
        curves = load_curves(client, ok[ok[metric].notna()], metric)
        if not curves.empty:
            figure_paths += save_figure(learning_curves(curves, metric), figures_dir / metric)
    for dataset in esl_datasets(ok):
        boosted = ok[(ok["dataset"] == dataset) & (ok["method"] == BOOSTED)]
        figure = esl_figure(load_curves(client, boosted, ESL_CURVE), ok, dataset)
        figure_paths += save_figure(figure, figures_dir / f"esl_fig10_2_{dataset}")
    for dataset, mean in fht_means.items():
        figure_paths += save_figure(fht_figure(mean, dataset), figures_dir / f"fht2000_{dataset}")
    trials = load_trials(client, experiment_id, ok)
    for metric, on_metric in trials.groupby("metric"):
        curves = best_so_far_curves(on_metric)
        figure = best_so_far_figure(curves, metric)
        figure_paths += save_figure(figure, figures_dir / f"best_so_far_{metric}")
        if curves["seconds"].notna().any():
            figure = best_so_far_time_figure(curves, metric)
            figure_paths += save_figure(figure, figures_dir / f"best_so_far_time_{metric}")
    margins = load_margins(client, ok)
    for method in boosted_methods(margins):
        figure = margin_figure(margins, method)
        figure_paths += save_figure(figure, figures_dir / f"margins_{method}")
    if figure_paths:
        log_report_run(client, experiment_id, figure_paths)
    return paths + figure_paths


def across_tables(tables: list[MetricTable], baseline: tuple[str, ...] | None) -> list:
    """The headline of a study of several datasets: per table with at least 2 datasets and 2
    columns, every column against `baseline` (default: `across.default_baseline`) across the
    datasets (`across.against_baseline` on the means of complete cells)."""
    headline = []
    for table in tables:
        reference = baseline or default_baseline(table)
        if len(table.mean) < 2 or table.mean.shape[1] < 2 or reference not in table.mean.columns:
            continue
        comparison = against_baseline(complete_means(table), table.metric, reference)
        headline.append(format_across(comparison, table.metric, reference))
    return headline


def fht_mean_curves(client: MlflowClient, ok: pd.DataFrame, dataset: str) -> pd.DataFrame:
    """The FHT (2000) algorithms' curves on `dataset`, each run's tree size and K-class scheme
    read from its params (reports.fht.terminal_nodes, algorithm_key), averaged over seeds
    (reports.fht.mean_curves)."""
    runs = ok[(ok["dataset"] == dataset) & ok["method"].map(method_option).isin(ALGORITHMS)]
    params = load_params(client, runs, [TREE_SIZE_PARAM, MULTICLASS_PARAM])
    nodes = runs["run_id"].map(params[TREE_SIZE_PARAM]).map(terminal_nodes)
    algorithms = pd.Series([algorithm_key(method_option(label), params.loc[run, MULTICLASS_PARAM])
                            for label, run in zip(runs["method"], runs["run_id"], strict=True)],
                           index=runs.index)  # fmt: skip
    curves = pd.concat([load_curves(client, group, FHT_CURVE).assign(nodes=size, key=key)
                        for (size, key), group in runs.groupby([nodes, algorithms])],
                       ignore_index=True)  # fmt: skip
    return mean_curves(curves.assign(method=curves["key"]).drop(columns="key"))
