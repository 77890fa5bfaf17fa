"""Figures of a report (critical-difference diagrams, learning curves), saved as PNG and PDF."""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from reports.stats import MIN_DATASETS, FriedmanResult  # noqa: E402
from reports.styles import engine_style, hues  # noqa: E402
from reports.tables import column_keys, column_label  # noqa: E402

FORMATS = ("png", "pdf")
CURVE_PREFIX = "curve_"


def save(figure: Figure, path_stem: Path) -> list[Path]:
    """Write `figure` as `path_stem`.png and .pdf, close it, and return the two paths."""
    path_stem.parent.mkdir(parents=True, exist_ok=True)
    paths = [path_stem.with_suffix(f".{fmt}") for fmt in FORMATS]
    for path in paths:
        figure.savefig(path, bbox_inches="tight", dpi=150)
    plt.close(figure)
    return paths


def nemenyi_cliques(avg_ranks: pd.Series, cd: float) -> list[tuple[int, int]]:
    """Maximal runs (first, last positions in rank order) of columns whose average ranks differ by
    less than `cd`: the groups joined by a bar in Demsar's diagram."""
    ranks = np.sort(avg_ranks.to_numpy())
    runs = [
        (i, max(j for j in range(i, len(ranks)) if ranks[j] - ranks[i] < cd))
        for i in range(len(ranks))
    ]
    maximal = [r for r in runs if r[1] > r[0]]
    return [
        r for r in maximal if not any(o != r and o[0] <= r[0] and r[1] <= o[1] for o in maximal)
    ]


def cd_diagram(result: FriedmanResult) -> Figure:
    """Demsar's critical-difference diagram: average ranks on an axis (1 = best, on the left),
    the CD interval (gid "cd"), bars joining groups within CD just under the axis (gid
    "clique"), and below them each column (method, engine[, encoding]) on its own row, labelled
    outside the axis
    (better half on the left). The height grows with the number of rows, so no label meets
    another or a rank line. A ValueError for a result over fewer than MIN_DATASETS datasets:
    its CD claims nothing (FriedmanResult.claims), so no diagram is drawn as if it did."""
    if not result.claims:
        raise ValueError(f"{result.metric}: {result.n_datasets} datasets, fewer than "
                         f"{MIN_DATASETS}: a CD diagram would claim nothing")  # fmt: skip
    ranks = result.avg_ranks.sort_values()
    k = len(ranks)
    half = (k + 1) // 2
    cliques = nemenyi_cliques(ranks, result.cd)
    bar_step, row_step = 0.2, 0.45
    first_row = -0.35 - bar_step * len(cliques)
    bottom = first_row - row_step * (max(half, k - half) - 1) - 0.3
    figure, ax = plt.subplots(figsize=(7, 0.7 + 0.45 * (1.9 - bottom)))
    ax.set_xlim(0.5, k + 0.5)
    ax.set_ylim(bottom, 1.9)
    ax.axis("off")
    ax.hlines(0, 1, k, color="black")
    for r in range(1, k + 1):
        ax.vlines(r, 0, 0.15, color="black")
        ax.text(r, 0.25, str(r), ha="center", va="bottom")
    ax.hlines(1.3, 1, 1 + result.cd, color="black", linewidth=2, gid="cd")
    ax.text(1 + result.cd / 2, 1.4, f"CD = {result.cd:.2f}", ha="center", va="bottom")
    for offset, (first, last) in enumerate(cliques):
        y = -0.2 - bar_step * offset
        start, end = ranks.iloc[first] - 0.03, ranks.iloc[last] + 0.03
        ax.hlines(y, start, end, color="black", linewidth=3, gid="clique")
    for position, (pair, rank) in enumerate(ranks.items()):
        left = position < half
        depth = first_row - row_step * (position if left else k - 1 - position)
        edge = 0.5 if left else k + 0.5
        ax.plot([rank, rank, edge], [0, depth, depth], color="black", linewidth=0.8)
        label = f"{column_label(pair)} ({rank:.2f})"
        ax.annotate(label, (edge, depth), xytext=(-4 if left else 4, 0), textcoords="offset points",
                    ha="right" if left else "left", va="center", fontsize=9)  # fmt: skip
    ax.set_title(f"{result.metric}: Nemenyi CD (alpha {result.alpha:g}, N = {result.n_datasets})")
    return figure


def learning_curves(curves: pd.DataFrame, metric: str) -> Figure:
    """One panel per dataset, one line per column (method, engine[, encoding]: `column_keys`):
    `metric` against the number of rounds, the mean over seeds at each logged round; a colour
    per method (and encoding), a dash pattern per engine; one legend for all panels."""
    keys = column_keys(curves)
    mean = curves.groupby(["dataset", *keys, "rounds"])["value"].mean()
    datasets = sorted(curves["dataset"].unique())
    n_cols = min(3, len(datasets))
    n_rows = -(-len(datasets) // n_cols)
    figure, axes = plt.subplots(
        n_rows, n_cols, figsize=(4.2 * n_cols, 3.2 * n_rows), squeeze=False, layout="constrained"
    )
    columns = sorted(curves.groupby(keys).groups)
    colors = hues(columns, keys)
    for ax, dataset in zip(axes.flat, datasets, strict=False):
        for column, line in mean.loc[dataset].groupby(level=keys):
            points = line.droplevel(keys)
            ax.plot(points.index, points.to_numpy(), engine_style(column[1]),
                    color=colors[column], label=column_label(column))  # fmt: skip
        ax.set_title(dataset)
        ax.set_xlabel("rounds (boosting) or trees (forests, bagging)")
        ax.set_ylabel(metric.removeprefix(CURVE_PREFIX))
    for ax in axes.flat[len(datasets) :]:
        ax.axis("off")
    handles = [plt.Line2D([], [], linestyle=engine_style(column[1]), color=colors[column])
               for column in columns]  # fmt: skip
    figure.legend(
        handles,
        [column_label(column) for column in columns],
        loc="outside lower center",
        ncols=min(4, len(columns)),
        title=f"{' / '.join(keys)} (mean over seeds)",
    )
    return figure
