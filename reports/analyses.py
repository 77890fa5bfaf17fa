"""Tables of the per-job analyses: the bias-variance decomposition (bv_*) and the diversity of
ensembles of independent members (div_*), one table per dataset, rows = method / engine."""

from collections.abc import Callable

import pandas as pd

from reports.render import MISSING, PLUS_MINUS, TextTable, format_cell, pair_label, row_decimals
from reports.tables import PAIR_KEYS

ZERO_ONE_COLUMNS = {
    "bv_loss": "loss",
    "bv_bias": "bias",
    "bv_variance": "variance",
    "bv_variance_unbiased": "unbiased var.",
    "bv_variance_biased": "biased var.",
}
SQUARED_LOSS_COLUMNS = {"bv_loss": "loss", "bv_bias": "bias^2", "bv_variance": "variance"}
DIVERSITY_COLUMNS = {
    "div_member_error": "member error",
    "div_vote_error": "vote error",
    "div_binomial_vote_error": "binomial vote error",
    "div_disagreement": "disagreement",
    "div_q": "Q",
    "div_strength": "strength s",
    "div_correlation": "correlation rho",
    "div_breiman_bound": "bound rho(1-s^2)/s^2",
}
BIAS_VARIANCE_CAPTION = (
    "Bias-variance decomposition of the test loss over eval.n_bootstrap bootstrap training sets "
    "and a fixed test set (experiments/bias_variance.py); mean {pm} sample std over seeds (one "
    "test set each); lowest per column in bold. {loss}"
)
SQUARED_LOSS_NOTE = (
    "Squared loss: loss = bias^2 + variance exactly; bias^2 is measured against the observed "
    "y, so it includes the noise."
)
ZERO_ONE_NOTE = (
    "0-1 loss (Domingos 2000): bias = share of test points whose main (most frequent) prediction "
    "is wrong; variance = unbiased var. - biased var. (net variance), so loss = bias + variance "
    "exactly."
)
DIVERSITY_CAPTION = (
    "Ensembles of independent members on the test set, mean over seeds and splits: mean member "
    "error, error of the members' majority vote and its binomial prediction for independent "
    "members (ESL 8.7); mean pairwise disagreement and Yule's Q of the members' oracle outputs "
    "(Kuncheva and Whitaker 2003); Breiman's (2001) strength s, mean correlation rho of the raw "
    "margins and the bound PE* <= rho (1 - s^2) / s^2."
)


def cell_statistics(runs: pd.DataFrame, metrics: list[str]) -> pd.DataFrame:
    """Mean and sample std (ddof=1) over runs of each metric per (dataset, method, engine); the
    columns are (statistic, metric) pairs; empty if no run has any of `metrics`."""
    present = [m for m in metrics if m in runs.columns and runs[m].notna().any()]
    if not present:
        return pd.DataFrame()
    logged = runs.dropna(subset=present, how="all")
    return logged.groupby(["dataset", *PAIR_KEYS])[present].agg(["mean", "std"]).swaplevel(
        axis=1
    )


Layout = Callable[[set[str]], tuple[dict[str, str], str]]  # metrics present -> columns, caption


def _dataset_tables(
    stats: pd.DataFrame, title: str, layout: Layout, bold_lowest: bool
) -> list[TextTable]:
    """One TextTable per dataset: rows method / engine, `mean ± std` of each metric of
    `layout(the metrics present)`'s columns (metric -> header), under its caption."""
    tables = []
    for dataset, rows in stats.groupby(level="dataset"):
        rows = rows.droplevel("dataset")
        means = rows["mean"].dropna(axis=1, how="all")
        columns, caption = layout(set(means.columns))
        metrics = [m for m in columns if m in means.columns]
        decimals = row_decimals(means[metrics].stack())
        cells = pd.DataFrame(
            {
                columns[m]: [
                    format_cell(mean, std, decimals)
                    for mean, std in zip(means[m], rows["std"][m], strict=True)
                ]
                for m in metrics
            },
            index=pd.Index([pair_label(pair) for pair in means.index], name="method / engine"),
        )
        lowest = means[metrics].eq(means[metrics].min(axis=0), axis=1) & bold_lowest
        bold = pd.DataFrame(lowest.to_numpy(), index=cells.index, columns=cells.columns)
        bold &= cells != MISSING
        tables.append(TextTable(f"{title}: {dataset}", caption, cells, bold))
    return tables


def bias_variance_layout(present: set[str]) -> tuple[dict[str, str], str]:
    """0-1 columns and note when the unbiased variance was logged, else the squared-loss ones."""
    if "bv_variance_unbiased" in present:
        return ZERO_ONE_COLUMNS, BIAS_VARIANCE_CAPTION.format(pm=PLUS_MINUS, loss=ZERO_ONE_NOTE)
    return SQUARED_LOSS_COLUMNS, BIAS_VARIANCE_CAPTION.format(pm=PLUS_MINUS, loss=SQUARED_LOSS_NOTE)


def bias_variance_tables(runs: pd.DataFrame) -> list[TextTable]:
    """Per dataset: loss, bias, variance (and for 0-1 loss the unbiased and biased variance)."""
    stats = cell_statistics(runs, list(ZERO_ONE_COLUMNS))
    if stats.empty:
        return []
    return _dataset_tables(stats, "bias-variance", bias_variance_layout, True)


def diversity_tables(runs: pd.DataFrame) -> list[TextTable]:
    """Per dataset: errors, pairwise diversity and Breiman's strength, correlation and bound."""
    stats = cell_statistics(runs, list(DIVERSITY_COLUMNS))
    if stats.empty:
        return []
    return _dataset_tables(
        stats, "diversity", lambda _: (DIVERSITY_COLUMNS, DIVERSITY_CAPTION), False
    )
