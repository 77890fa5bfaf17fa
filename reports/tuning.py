"""Tuned against default: per dataset and column (method, engine[, encoding]: as
`reports.tables.column_keys`), the gain of tuning and its
significance; best-so-far curves over the trials (Grinsztajn et al. 2022, section 4: the
outer test score of the best configuration so far by inner score, averaged over random orders
of the trials); and the tunability of each hyper-parameter (Probst et al. 2019)."""

import itertools
import math
import re

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from reports.render import TextTable, column_label, row_decimals
from reports.runs import ENCODING
from reports.stats import ALPHA, holm, paired_values, wilcoxon_p
from reports.styles import engine_style, hues
from reports.tables import MetricTable, column_keys

TUNED_SEPARATOR = "+"  # a tuned job's method label: gbt+tpe (reports.runs.load_runs)
N_ORDERS = 100  # random orders of the trials that a best-so-far curve averages
TUNABILITY_STATISTICS = ["parameter", "tunability", "share", "datasets", "p_holm"]


def tuned_keys(keys: list[str]) -> list[str]:
    """The key columns of a tuning table of `keys` columns: method, sampler, engine[, encoding]."""
    return [keys[0], "sampler", *keys[1:]]


def key_columns(table: pd.DataFrame) -> list[str]:
    """The column keys (method, engine[, encoding]) that the rows of a tuning table carry."""
    return ["method", "engine", *(key for key in [ENCODING] if key in table.columns)]


def default_vs_tuned(table: MetricTable) -> pd.DataFrame:
    """One row per (dataset, method, sampler, engine[, encoding]) with both a default and a
    tuned column: their means, gain = default - tuned (> 0: tuning helped, every metric is
    lower-is-better), and the two-sided Wilcoxon signed-rank p-value on values paired by seed
    and split, Holm-adjusted over the comparisons of the dataset."""
    rows = []
    for dataset, means in table.mean.iterrows():
        compared = []
        for column in means.index:
            base, _, sampler = column[0].partition(TUNED_SEPARATOR)
            untuned = (base, *column[1:])
            if not sampler or untuned not in means.index:
                continue
            default, tuned = means[untuned], means[column]
            if np.isnan(default) or np.isnan(tuned):
                continue
            pairs = paired_values(table.values, dataset, untuned, column, table.keys)
            compared.append({"dataset": dataset, **dict(zip(table.keys, untuned, strict=True)),
                             "sampler": sampler, "default": default, "tuned": tuned,
                             "gain": default - tuned, "p": wilcoxon_p(*pairs)})  # fmt: skip
        rows += with_holm(compared)
    columns = ["dataset", *tuned_keys(table.keys), "default", "tuned", "gain", "p_holm"]
    return pd.DataFrame(rows, columns=columns)


def with_holm(compared: list[dict]) -> list[dict]:
    """The rows with p_holm: their p-values Holm-adjusted among themselves."""
    adjusted = holm([row["p"] for row in compared])
    return [{**row, "p_holm": p} for row, p in zip(compared, adjusted, strict=True)]


def signed(value: float, decimals: int) -> str:
    """`+0.123` or `-0.123`; a value that rounds to zero reads `+0.000`, never `-0.000`."""
    return f"{round(value, decimals) + 0.0:+.{decimals}f}"


def format_default_vs_tuned(comparison: pd.DataFrame, metric: str) -> TextTable:
    """The comparison as a table: a significant gain (tuned better at alpha) in bold."""
    caption = (
        f"{metric}: mean over seeds and outer splits of the default configuration and of the "
        "configuration tuned on the outer training rows (nested: inner split, best trial "
        "refitted); gain = default - tuned (> 0: tuning helped); p: two-sided Wilcoxon "
        "signed-rank on values paired by seed and split, Holm-corrected within the dataset; "
        f"bold: tuned significantly better at alpha {ALPHA}."
    )
    keys = key_columns(comparison)
    index = [f"{row['dataset']}: {column_label(tuple(row[keys]))} ({row['sampler']})"
             for _, row in comparison.iterrows()]  # fmt: skip
    decimals = [row_decimals(pd.Series([row.default, row.tuned]))
                for row in comparison.itertuples()]  # fmt: skip
    cells = pd.DataFrame(
        {
            "default": [f"{v:.{d}f}" for v, d in zip(comparison["default"], decimals, strict=True)],
            "tuned": [f"{v:.{d}f}" for v, d in zip(comparison["tuned"], decimals, strict=True)],
            "gain": [signed(v, d) for v, d in zip(comparison["gain"], decimals, strict=True)],
            "p (Holm)": [f"{v:.3g}" for v in comparison["p_holm"]],
        },
        index=pd.Index(index, name=f"dataset: {' / '.join(keys)} (sampler)"),
    )
    significant = ((comparison["p_holm"] < ALPHA) & (comparison["gain"] > 0)).to_numpy()
    bold = pd.DataFrame(False, index=cells.index, columns=cells.columns)
    bold["gain"] = significant
    return TextTable(f"{metric}: default vs tuned", caption, cells, bold)


def tunability(runs: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Probst et al. (2019, eq. 2, with nested outer test scores): per tuned column (method,
    engine[, encoding]) and parameter p, d_p = default - tuned with p alone (the others at
    their defaults), each dataset's mean over seeds and splits, then the mean over datasets
    (> 0: tuning p alone helped); `share` = d_p / the joint tuning's gain; p: two-sided
    Wilcoxon signed-rank on the runs' (default, tuned alone) pairs, Holm-adjusted over the
    parameters of the method."""
    default = f"default_{metric}"
    if default not in runs.columns:
        return pd.DataFrame(columns=[*tuned_keys(column_keys(runs)), *TUNABILITY_STATISTICS])
    alone = {match[1]: column for column in runs.columns
             if (match := re.fullmatch(rf"tunability_(.+)_{metric}", column))}  # fmt: skip
    tuned = runs[runs[default].notna()]
    keys = column_keys(tuned)
    rows = []
    for (label, *rest), group in tuned.groupby(keys):
        method, _, sampler = label.partition(TUNED_SEPARATOR)
        untuned = dict(zip(keys, (method, *rest), strict=True))
        joint = dataset_gain(group, default, metric).mean()
        compared = []
        for parameter, column in sorted(alone.items()):
            scored = group[group[column].notna()]
            if scored.empty:
                continue
            gain = dataset_gain(scored, default, column).mean()
            compared.append({**untuned, "sampler": sampler, "parameter": parameter,
                             "tunability": gain,
                             "share": gain / joint if joint > 0 else np.nan,
                             "datasets": scored["dataset"].nunique(),
                             "p": wilcoxon_p(scored[default], scored[column])})  # fmt: skip
        rows += with_holm(compared)
    table = pd.DataFrame(rows, columns=[*tuned_keys(keys), *TUNABILITY_STATISTICS])
    return table.sort_values([*keys, "tunability"], ascending=[*(True for _ in keys), False],
                             ignore_index=True)  # fmt: skip


def dataset_gain(runs: pd.DataFrame, before: str, after: str) -> pd.Series:
    """Per dataset, the mean of `before` minus the mean of `after` over its runs."""
    means = runs.groupby("dataset")[[before, after]].mean()
    return means[before] - means[after]


def format_tunability(table: pd.DataFrame, metric: str) -> TextTable:
    """The tunability table: a significant positive tunability in bold."""
    caption = (
        f"{metric}: tunability of each hyper-parameter (Probst et al. 2019): the gain of tuning "
        "it alone, the others at their defaults (nested: inner split, best trial refitted, "
        "outer test score), mean over datasets of default - tuned alone (> 0: tuning it "
        "helped); share: of the gain of tuning all of them jointly; p: two-sided Wilcoxon "
        "signed-rank over runs, Holm-corrected within the method; bold: significant at alpha "
        f"{ALPHA}."
    )
    decimals = row_decimals(table["tunability"])
    keys = key_columns(table)
    index = [f"{column_label(tuple(row[keys]))} ({row['sampler']}): {row['parameter']}"
             for _, row in table.iterrows()]  # fmt: skip
    cells = pd.DataFrame(
        {
            "tunability": [signed(v, decimals) for v in table["tunability"]],
            "share of joint gain": [f"{v:.0%}" if not np.isnan(v) else "-"
                                    for v in table["share"]],  # fmt: skip
            "datasets": [str(n) for n in table["datasets"]],
            "p (Holm)": [f"{v:.3g}" for v in table["p_holm"]],
        },
        index=pd.Index(index, name=f"{' / '.join(keys)} (sampler): parameter"),
    )
    bold = pd.DataFrame(False, index=cells.index, columns=cells.columns)
    bold["tunability"] = ((table["p_holm"] < ALPHA) & (table["tunability"] > 0)).to_numpy()
    return TextTable(f"{metric}: tunability per hyper-parameter", caption, cells, bold)


def best_so_far(test: np.ndarray, inner: np.ndarray, orders: np.ndarray) -> np.ndarray:
    """Mean over `orders` (rows: permutations of the trials) of the outer test score of the
    trial with the lowest inner score among the first k, for k = 1..n (ties: the earlier)."""
    inner_ordered = inner[orders]
    rows = np.arange(len(orders))
    best_position = np.zeros(orders.shape, dtype=int)
    for k in range(1, orders.shape[1]):
        previous = best_position[:, k - 1]
        improved = inner_ordered[:, k] < inner_ordered[rows, previous]
        best_position[:, k] = np.where(improved, k, previous)
    chosen = np.take_along_axis(orders, best_position, axis=1)
    return test[chosen].mean(axis=0)


def trial_orders(n: int, rng: np.random.RandomState) -> np.ndarray:
    """Every order of n trials when there are at most N_ORDERS (the exact mean), else N_ORDERS
    random ones."""
    if math.factorial(n) <= N_ORDERS:
        return np.array(list(itertools.permutations(range(n))))
    return np.array([rng.permutation(n) for _ in range(N_ORDERS)])


def best_so_far_curves(trials: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Per (dataset, method, engine[, encoding]: `column_keys`): the best-so-far curve of each
    tuned outer split (the same
    trial_orders for every split of n trials), averaged over seeds and splits; with
    `normalized`, the curve rescaled per dataset to [0, 1] between the lowest and the highest
    point of that dataset's curves (0: the best), as Grinsztajn et al. compare datasets."""
    rng = np.random.RandomState(seed)
    orders_by_n: dict[int, np.ndarray] = {}
    rows = []
    cells = ["dataset", *column_keys(trials)]
    for key, group in trials.groupby([*cells, "run_id", "outer_split"]):
        group = group.sort_values("trial")
        n = len(group)
        if n not in orders_by_n:
            orders_by_n[n] = trial_orders(n, rng)
        curve = best_so_far(group["test"].to_numpy(), group["inner"].to_numpy(), orders_by_n[n])
        cell = dict(zip(cells, key, strict=False))
        rows += [{**cell, "trials": k + 1, "value": value} for k, value in enumerate(curve)]
    columns = [*cells, "trials", "value"]
    curves = pd.DataFrame(rows, columns=columns)
    curves = curves.groupby(columns[:-1], as_index=False)["value"].mean()
    low = curves.groupby("dataset")["value"].transform("min")
    high = curves.groupby("dataset")["value"].transform("max")
    curves["normalized"] = ((curves["value"] - low) / (high - low)).where(high > low, 0.0)
    return curves


def best_so_far_figure(curves: pd.DataFrame, metric: str) -> Figure:
    """One panel per dataset (the metric) and a last panel averaging the normalized curves
    over datasets; one line per column (method, engine[, encoding]: `column_keys`)."""
    keys = column_keys(curves)
    datasets = sorted(curves["dataset"].unique())
    panels = len(datasets) + 1
    n_cols = min(3, panels)
    n_rows = -(-panels // n_cols)
    figure, axes = plt.subplots(n_rows, n_cols, figsize=(4.2 * n_cols, 3.2 * n_rows),
                                squeeze=False, layout="constrained")  # fmt: skip
    colors = hues(sorted(curves.groupby(keys).groups), keys)
    normalized = curves.groupby([*keys, "trials"], as_index=False)["normalized"].mean()
    sources = [(dataset, curves[curves["dataset"] == dataset], "value", metric)
               for dataset in datasets]  # fmt: skip
    sources.append(("normalized, mean over datasets", normalized, "normalized",
                    f"normalized {metric} (0: best)"))  # fmt: skip
    for ax, (title, frame, column, label) in zip(axes.flat, sources, strict=False):
        for key, line in frame.groupby(keys):
            ax.plot(line["trials"], line[column], engine_style(key[1]), color=colors[key],
                    label=column_label(key))  # fmt: skip
        ax.set_title(title)
        ax.set_xlabel("trials")
        ax.set_ylabel(label)
    for ax in axes.flat[panels:]:
        ax.axis("off")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="outside lower center", ncols=min(4, len(labels)),
                  title=f"{' / '.join(keys)}: test score of the best configuration so far by "
                        f"inner score, mean of {N_ORDERS} random trial orders")  # fmt: skip
    return figure
