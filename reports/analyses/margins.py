"""Cumulative distributions of the normalized training margins that AdaBoost and LogitBoost
jobs log as `margins.csv` (experiments/analyses/margins.py), drawn as in Schapire, Freund,
Bartlett and Lee (1998, Figure 2): one figure per method, one panel per dataset, one line per
round count."""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from reports.styles import engine_style
from reports.tables import column_keys


def margin_cdf(margins: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Empirical CDF as a step function: sorted margins x and the share of margins <= x."""
    x = np.sort(np.asarray(margins, float))
    return x, np.arange(1, len(x) + 1) / len(x)


def boosted_methods(margins: pd.DataFrame) -> list[str]:
    """The methods with margins after more than one round (a single stump's are all +-1)."""
    return sorted(margins.loc[margins["rounds"] > 1, "method"].unique())


def margin_figure(margins: pd.DataFrame, method: str) -> Figure:
    """Cumulative distribution of the training margins of `method`, pooled over seeds: a panel
    per dataset, a colour per round count (darker: more rounds), a line style per engine, a
    line per engine and encoding where a dataset has more than one (`column_keys`)."""
    rows = margins[margins["method"] == method]
    line_keys = column_keys(rows)[1:]
    datasets = sorted(rows["dataset"].unique())
    n_cols = min(3, len(datasets))
    n_rows = -(-len(datasets) // n_cols)
    figure, axes = plt.subplots(
        n_rows, n_cols, figsize=(4.2 * n_cols, 3.4 * n_rows), squeeze=False, layout="constrained"
    )
    for ax, dataset in zip(axes.flat, datasets, strict=False):
        on_dataset = rows[rows["dataset"] == dataset]
        counts = sorted(on_dataset["rounds"].unique())
        shades = plt.cm.viridis(np.linspace(0.85, 0.0, len(counts)))
        for (*line, rounds), group in on_dataset.groupby([*line_keys, "rounds"]):
            x, cdf = margin_cdf(group["margin"])
            style = engine_style(line[0])
            color = shades[counts.index(rounds)]
            label = f"{rounds} rounds, {' / '.join(line)}"
            ax.step(x, cdf, where="post", linestyle=style, color=color, label=label)
        ax.axvline(0, color="grey", linewidth=0.6)
        ax.set_xlim(-1, 1)
        ax.set_xticks([-1, -0.5, 0, 0.5, 1])
        ax.set_ylim(0, 1.02)
        ax.set_title(dataset)
        ax.set_xlabel("normalized training margin")
        ax.set_ylabel("cumulative share of training rows")
        ax.legend(fontsize=7, loc="lower right")
    for ax in axes.flat[len(datasets) :]:
        ax.axis("off")
    figure.suptitle(f"{method}: margin distributions (pooled over seeds)")
    return figure
