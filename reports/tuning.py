"""Tuned against default: per dataset and column (method, engine[, encoding]: as
`reports.tables.column_keys`), the gain of tuning and its
significance; best-so-far curves over the trials (Grinsztajn et al. 2022, section 4, and
their code: the outer test score of the trial the tuner would choose so far, a random search's
trials shuffled after the default, TPE's in their order, normalized per trial), also against the
trials' cumulative seconds; the tunability of each hyper-parameter (Probst et al. 2019); and
the cost of tuning (seconds, trials per minute, failed and infeasible trials)."""

import itertools
import math
import re
from typing import NamedTuple

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from experiments.tuning.selection import selection_key
from reports.render import CORRECTED_T, ERROR_FLOOR, MISSING, TextTable, row_decimals
from reports.runs import ENCODING, LIBRARY_DEFAULTS
from reports.stats import ALPHA, MIN_RESAMPLES, holm, paired_p, smallest_wilcoxon_p, wilcoxon_p
from reports.styles import engine_style, hues
from reports.tables import MetricTable, column_keys, column_label

TUNED_SEPARATOR = "+"  # a tuned job's method label: gbt+tpe (reports.runs.load_runs)
N_ORDERS = 15  # random orders of a random search (their n_shuffles, analyses/plot_utils.R)
RANDOM_SAMPLER = "random"  # tune.name of the random search (its trials may be shuffled)
TUNABILITY_STATISTICS = ["parameter", "tunability", "share", "datasets", "p_holm"]
ACROSS_STATISTICS = ["datasets", "tuned_better", "gain", "p", "p_holm"]


def tuned_parts(label: str) -> tuple[str, str]:
    """(the untuned method label, the sampler) of a tuned method label: gbt+tpe -> (gbt, tpe),
    gbt+tpe [max_depth=2] -> (gbt [max_depth=2], tpe) (reports.runs.load_runs); sampler ''
    for an untuned label."""
    name, bracket, params = label.partition(" [")
    base, _, sampler = name.partition(TUNED_SEPARATOR)
    return base + bracket + params, sampler


def library_label(untuned: str) -> str:
    """The label of the library-defaults runs of an untuned method label: gbt -> gbt@library,
    gbt [max_depth=2] -> gbt@library [max_depth=2]."""
    name, bracket, params = untuned.partition(" [")
    return name + LIBRARY_DEFAULTS + bracket + params


def tuned_keys(keys: list[str]) -> list[str]:
    """The key columns of a tuning table of `keys` columns: method, sampler, engine[, encoding]."""
    return [keys[0], "sampler", *keys[1:]]


def key_columns(table: pd.DataFrame) -> list[str]:
    """The column keys (method, engine[, encoding]) that the rows of a tuning table carry."""
    return ["method", "engine", *(key for key in [ENCODING] if key in table.columns)]


def default_vs_tuned(table: MetricTable) -> pd.DataFrame:
    """One row per (dataset, method, sampler, engine[, encoding]) with both a default and a
    tuned column: their means over seeds and splits (and the mean of the library's own
    defaults, `library_default`, where the sweep ran engine.defaults_from=library; NaN
    elsewhere), gain = default - tuned (> 0: tuning helped, every metric is lower-is-better),
    and the two-sided p of Nadeau and Bengio's corrected resampled t-test on values paired by
    seed and split (`stats.paired_p`, the error-rate variance floor included; NaN: untested,
    e.g. fewer than stats.MIN_RESAMPLES pairs), Holm-adjusted over the comparisons of the
    dataset."""
    rows = []
    for dataset, means in table.mean.iterrows():
        compared = []
        for column in means.index:
            base, sampler = tuned_parts(column[0])
            untuned = (base, *column[1:])
            if not sampler or untuned not in means.index:
                continue
            default, tuned = means[untuned], means[column]
            if np.isnan(default) or np.isnan(tuned):
                continue
            library = (library_label(base), *column[1:])
            p = paired_p(table, dataset, untuned, column)
            compared.append({"dataset": dataset, **dict(zip(table.keys, untuned, strict=True)),
                             "sampler": sampler, "default": default,
                             "library_default": means.get(library, np.nan), "tuned": tuned,
                             "gain": default - tuned, "p": p})  # fmt: skip
        rows += with_holm(compared)
    columns = ["dataset", *tuned_keys(table.keys), "default", "library_default", "tuned", "gain",
               "p_holm"]  # fmt: skip
    return pd.DataFrame(rows, columns=columns)


def across_datasets(comparison: pd.DataFrame) -> pd.DataFrame:
    """Default vs tuned with the dataset as the unit (Demsar 2006): per (method, sampler,
    engine[, encoding]) the number of datasets, those where tuning helped (gain > 0), the mean
    gain over datasets, and the two-sided Wilcoxon signed-rank p on the per-dataset (default,
    tuned) means of `default_vs_tuned`, Holm-adjusted over all the rows."""
    keys = [*key_columns(comparison), "sampler"]
    rows = [{**dict(zip(keys, key, strict=True)), "datasets": len(group),
             "tuned_better": int((group["gain"] > 0).sum()), "gain": group["gain"].mean(),
             "p": wilcoxon_p(group["default"], group["tuned"])}
            for key, group in comparison.groupby(keys)]  # fmt: skip
    columns = [*tuned_keys(key_columns(comparison)), *ACROSS_STATISTICS]
    return pd.DataFrame(with_holm(rows), columns=columns)


def verdict(p_holm: float, gain: float) -> str:
    """`tuned better` or `tuned worse` when significant at ALPHA, else `not significant`, or
    `untested` (p NaN)."""
    if math.isnan(p_holm):
        return "untested"
    if p_holm >= ALPHA:
        return "not significant"
    return "tuned better" if gain > 0 else "tuned worse"


def with_holm(compared: list[dict]) -> list[dict]:
    """The rows with p_holm: their p-values Holm-adjusted among themselves."""
    adjusted = holm([row["p"] for row in compared])
    return [{**row, "p_holm": p} for row, p in zip(compared, adjusted, strict=True)]


def signed(value: float, decimals: int) -> str:
    """`+0.123` or `-0.123`; a value that rounds to zero reads `+0.000`, never `-0.000`."""
    return f"{round(value, decimals) + 0.0:+.{decimals}f}"


def format_default_vs_tuned(comparison: pd.DataFrame, metric: str) -> TextTable:
    """The per-dataset comparison as a table: a significant gain or loss in bold, and said in
    the verdict column."""
    caption = (
        f"{metric}: mean over seeds and outer splits of the default configuration and of the "
        "configuration tuned on the outer training rows (nested: inner split, best trial "
        "refitted); gain = default - tuned (> 0: tuning helped); p: within the dataset, "
        f"{CORRECTED_T} ({ERROR_FLOOR}; untested with fewer than {MIN_RESAMPLES} resamples "
        "or where the runs do not carry their split sizes), "
        f"Holm-corrected within the dataset; bold gain: significant at alpha {ALPHA}, a gain "
        "(verdict `tuned better`) or a loss (negative, verdict `tuned worse`). Default: the "
        "lab's defaults mapped to every engine (the tuner's trial 0); library default, where "
        "the sweep ran engine.defaults_from=library: the library's own constructor defaults "
        f"(`{MISSING}`: the in-house engine, or no such run). Across datasets: the next table."
    )
    keys = key_columns(comparison)
    index = [f"{row['dataset']}: {column_label(tuple(row[keys]))} ({row['sampler']})"
             for _, row in comparison.iterrows()]  # fmt: skip
    decimals = [row_decimals(pd.Series([row.default, row.tuned]))
                for row in comparison.itertuples()]  # fmt: skip

    def numbers(column: str) -> list[str]:
        return [MISSING if np.isnan(v) else f"{v:.{d}f}"
                for v, d in zip(comparison[column], decimals, strict=True)]  # fmt: skip

    library = {"library default": numbers("library_default")}
    cells = pd.DataFrame(
        {
            "default": numbers("default"),
            **(library if comparison["library_default"].notna().any() else {}),
            "tuned": numbers("tuned"),
            "gain": [signed(v, d) for v, d in zip(comparison["gain"], decimals, strict=True)],
            "p (Holm)": [f"{v:.3g}" for v in comparison["p_holm"]],
            "verdict": [verdict(p, g) for p, g in zip(comparison["p_holm"], comparison["gain"],
                                                      strict=True)],  # fmt: skip
        },
        index=pd.Index(index, name=f"dataset: {' / '.join(keys)} (sampler)"),
    )
    return gain_table(f"{metric}: default vs tuned", caption, cells, comparison["p_holm"])


def gain_table(title: str, caption: str, cells: pd.DataFrame, p_holm: pd.Series) -> TextTable:
    """The table of `cells` with the gain in bold where the Holm-corrected p is below ALPHA."""
    bold = pd.DataFrame(False, index=cells.index, columns=cells.columns)
    bold["gain"] = (p_holm < ALPHA).to_numpy()
    return TextTable(title, caption, cells, bold)


def format_across_datasets(summary: pd.DataFrame, metric: str) -> TextTable:
    """The across-dataset comparison (`across_datasets`) as a table: a significant gain or
    loss in bold, and said in the verdict column."""
    n_max = int(summary["datasets"].max()) if len(summary) else 0
    caption = (
        f"{metric}: default vs tuned with the dataset as the unit (Demsar 2006): each "
        "dataset's mean over seeds and outer splits; datasets: how many (at most "
        f"{n_max}); tuned better: on how many the tuned mean is lower; gain: mean over "
        "datasets of default - tuned (scales of datasets differ: descriptive); p: two-sided "
        "Wilcoxon signed-rank test on the per-dataset (default, tuned) pairs, Holm-corrected "
        f"over the {len(summary)} comparisons (method x sampler x engine); bold gain: "
        f"significant at alpha {ALPHA}, a gain (verdict `tuned better`) or a loss (negative, "
        "verdict `tuned worse`); with n datasets the smallest p is 2/2^n, so fewer than 6 "
        "cannot reach 0.05 (verdict `too few datasets`)."
    )
    keys = key_columns(summary)
    index = [f"{column_label(tuple(row[keys]))} ({row['sampler']})"
             for _, row in summary.iterrows()]  # fmt: skip
    decimals = row_decimals(summary["gain"])
    too_few = [smallest_wilcoxon_p(n) >= ALPHA for n in summary["datasets"]]
    cells = pd.DataFrame(
        {
            "datasets": [str(n) for n in summary["datasets"]],
            "tuned better": [str(n) for n in summary["tuned_better"]],
            "gain": [signed(v, decimals) for v in summary["gain"]],
            "p": [f"{v:.3g}" for v in summary["p"]],
            "p (Holm)": [f"{v:.3g}" for v in summary["p_holm"]],
            "verdict": ["too few datasets" if few else verdict(p, g) for few, p, g in
                        zip(too_few, summary["p_holm"], summary["gain"], strict=True)],  # fmt: skip
        },
        index=pd.Index(index, name=f"{' / '.join(keys)} (sampler)"),
    )
    return gain_table(f"{metric}: default vs tuned across datasets", caption, cells,
                      summary["p_holm"])


def tunability(runs: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Probst et al. (2019, eq. 2, with nested outer test scores): per tuned column (method,
    engine[, encoding]) and parameter p, d_p = default - tuned with p alone (the others at
    their defaults), each dataset's mean over seeds and splits, then the mean over datasets
    (> 0: tuning p alone helped); `share` = d_p / the joint tuning's gain; p: two-sided
    Wilcoxon signed-rank on the per-dataset means (default, tuned alone), the dataset as the
    unit, Holm-adjusted over the parameters of the method."""
    default = f"default_{metric}"
    if default not in runs.columns:
        return pd.DataFrame(columns=[*tuned_keys(column_keys(runs)), *TUNABILITY_STATISTICS])
    alone = {match[1]: column for column in runs.columns
             if (match := re.fullmatch(rf"tunability_(.+)_{metric}", column))}  # fmt: skip
    tuned = runs[runs[default].notna()]
    keys = column_keys(tuned)
    rows = []
    for (label, *rest), group in tuned.groupby(keys):
        method, sampler = tuned_parts(label)
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
                             "p": wilcoxon_p(*dataset_means(scored, default, column))})  # fmt: skip
        rows += with_holm(compared)
    table = pd.DataFrame(rows, columns=[*tuned_keys(keys), *TUNABILITY_STATISTICS])
    return table.sort_values([*keys, "tunability"], ascending=[*(True for _ in keys), False],
                             ignore_index=True)  # fmt: skip


def dataset_means(runs: pd.DataFrame, before: str, after: str) -> tuple[pd.Series, pd.Series]:
    """Per dataset, the means of `before` and of `after` over its runs."""
    means = runs.groupby("dataset")[[before, after]].mean()
    return means[before], means[after]


def dataset_gain(runs: pd.DataFrame, before: str, after: str) -> pd.Series:
    """Per dataset, the mean of `before` minus the mean of `after` over its runs."""
    before_means, after_means = dataset_means(runs, before, after)
    return before_means - after_means


def format_tunability(table: pd.DataFrame, metric: str) -> TextTable:
    """The tunability table: a significant tunability, positive or negative, in bold and said
    in the verdict column."""
    caption = (
        f"{metric}: tunability of each hyper-parameter (Probst et al. 2019): the gain of tuning "
        "it alone, the others at their defaults (nested: inner split, best trial refitted, "
        "outer test score), mean over datasets of default - tuned alone (> 0: tuning it "
        "helped); share: of the gain of tuning all of them jointly; datasets: how many; p: "
        "two-sided Wilcoxon signed-rank on the per-dataset means (default, tuned alone), the "
        "dataset as the unit (fewer than 6 datasets cannot reach 0.05), Holm-corrected "
        f"within the method; bold: significant at alpha {ALPHA}, a gain (verdict `tuned "
        "better`) or a loss (negative, verdict `tuned worse`)."
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
            "verdict": [verdict(p, g) for p, g in zip(table["p_holm"], table["tunability"],
                                                      strict=True)],  # fmt: skip
        },
        index=pd.Index(index, name=f"{' / '.join(keys)} (sampler): parameter"),
    )
    bold = pd.DataFrame(False, index=cells.index, columns=cells.columns)
    bold["tunability"] = (table["p_holm"] < ALPHA).to_numpy()
    return TextTable(f"{metric}: tunability per hyper-parameter", caption, cells, bold)


class CurveScore(NamedTuple):
    """How Grinsztajn et al. normalize a test metric per trial (analyses/random_search_utils.R,
    `normalize_no_variable`; quantiles and truncation: analyses/benchmark_plots_numerical.R):
    score s = -metric**power, a higher-is-better score affine in theirs on one test set
    (accuracy = 1 - error; R^2 = 1 - mse / var(y), affine in -rmse**2); normalized
    (s - Q_q(s)) / (max(s) - Q_q(s)) over the trials that share the test rows, 1 at the best
    trial, 0 at the q-quantile (their classification 0.1, regression 0.5); with `truncate`
    (their regression), values below 0 set to 0."""

    power: int
    quantile: float
    truncate: bool


CURVE_SCORES = {
    "test_error": CurveScore(1, 0.1, False),
    "test_logloss": CurveScore(1, 0.1, False),
    "test_rmse": CurveScore(2, 0.5, True),
    "test_mae": CurveScore(1, 0.5, True),
}
TEST_ROWS = ["dataset", "seed", "outer_split"]  # trials that share outer test rows


def normalized_scores(test: pd.Series, score: CurveScore) -> pd.Series:
    """Grinsztajn et al.'s normalization (CurveScore) of the test scores of trials that share
    their test rows; NaN (a trial without a score) stays NaN. If the max equals the quantile, the
    trials at the max score 1 and the others 0."""
    s = -test.to_numpy(dtype=float) ** score.power
    anchor, best = np.nanquantile(s, score.quantile), np.nanmax(s)
    if best > anchor:
        normalized = (s - anchor) / (best - anchor)
    else:
        normalized = np.where(np.isnan(s), np.nan, (s == best).astype(float))
    if score.truncate:
        normalized = np.where(normalized < 0, 0.0, normalized)
    return pd.Series(normalized, index=test.index)


def preference(inner: np.ndarray, tiebreak: np.ndarray, numbers: np.ndarray) -> np.ndarray:
    """The positions of the trials, the tuner's most preferred first: by
    experiments.tuning.selection's selection_key (inner score, inner tie-break metric, trial
    number), the one rule of the tuner and these curves; trials without an inner score
    (failed) last."""
    scored = [i for i in range(len(inner)) if not np.isnan(inner[i])]
    ranked = sorted(scored, key=lambda i: selection_key(inner[i], tiebreak[i], numbers[i]))
    return np.array(ranked + [i for i in range(len(inner)) if np.isnan(inner[i])], dtype=int)


def best_so_far(scores: np.ndarray, inner: np.ndarray, tiebreak: np.ndarray,
                numbers: np.ndarray, orders: np.ndarray) -> np.ndarray:
    """Per order (rows: permutations of the positions of the trials numbered `numbers`), the
    score of the trial the tuner would choose among the first k, for k = 1..n: the most
    preferred (`preference`) so far, so that the last point is the tuner's choice in every
    order; NaN while only failed trials have run."""
    preferred = preference(inner, tiebreak, numbers)
    rank = np.empty(len(inner), dtype=int)
    rank[preferred] = np.arange(len(inner))
    chosen = preferred[np.minimum.accumulate(rank[orders], axis=1)]
    return np.where(np.isnan(inner[chosen]), np.nan, scores[chosen])


def trial_orders(n: int, sampler: str, rng: np.random.RandomState,
                 n_orders: int = N_ORDERS) -> np.ndarray:
    """The orders a curve follows: TPE's trials in their real order (each depends on the ones
    before); a random search's trial 0 (the default configuration) first, as Grinsztajn et
    al.'s `default_first`, then its other trials in every order if there are at most `n_orders`
    of them (the exact mean), else in `n_orders` random ones."""
    if sampler != RANDOM_SAMPLER:
        return np.arange(n)[None, :]
    if math.factorial(n - 1) <= n_orders:
        shuffled = list(itertools.permutations(range(1, n)))
    else:
        shuffled = [1 + rng.permutation(n - 1) for _ in range(n_orders)]
    return np.array([[0, *order] for order in shuffled], dtype=int)


def counted_trials(group: pd.DataFrame) -> pd.DataFrame:
    """One study's trials as its tuner counts them (experiments.tuning.search: n_trials scored or
    failed), by trial number: a trial flagged `infeasible` (values the engine cannot run on
    this data, which the tuner resampled) left out; a failed one (no inner score) kept, counted
    and never chosen."""
    if "infeasible" in group:
        group = group[group["infeasible"].ne(True)]
    return group.sort_values("trial")


def best_so_far_curves(trials: pd.DataFrame, seed: int = 0,
                       n_orders: int = N_ORDERS) -> pd.DataFrame:
    """Grinsztajn et al.'s best-so-far curves (analyses/random_search_utils.R,
    `random_search_no_variable`): per (dataset, method, engine[, encoding]: `column_keys`) and
    order of the trials (`trial_orders`, the same orders for every study of n trials), the
    outer test score (`value`) and its normalization (`normalized`, CurveScore of the `metric`
    column, over every trial on the same outer test rows) of the trial the tuner would choose
    among the first k, mean over the seeds and outer splits; trials counted as the tuner counts
    them (`counted_trials`), each dataset's curves cut at its shortest study (their
    `equalize_n_iteration`). `seconds`: the cumulative wall time of those first k trials
    (`study_seconds`), mean over the same studies."""
    [metric] = trials["metric"].unique()
    rng = np.random.RandomState(seed)
    cells = ["dataset", *column_keys(trials)]
    normalized = trials.groupby(TEST_ROWS, group_keys=False)["test"].apply(
        normalized_scores, score=CURVE_SCORES[metric])
    trials = trials.assign(value=trials["test"], normalized=normalized,
                           tiebreak=trials.get("tiebreak", np.nan),
                           seconds=trials.get("seconds", np.nan))
    orders: dict[tuple[int, str], np.ndarray] = {}
    frames = []
    for key, group in trials.groupby([*cells, "seed", "run_id", "outer_split"]):
        study = counted_trials(group)
        n, sampler = len(study), tuned_parts(group["method"].iloc[0])[1]
        if (n, sampler) not in orders:
            orders[(n, sampler)] = trial_orders(n, sampler, rng, n_orders)
        inner = study["inner"].to_numpy(dtype=float)
        tiebreak = study["tiebreak"].to_numpy(dtype=float)
        numbers = study["trial"].to_numpy()
        values = {column: best_so_far(study[column].to_numpy(dtype=float), inner, tiebreak,
                                      numbers, orders[(n, sampler)])
                  for column in ["value", "normalized"]}  # fmt: skip
        values["seconds"] = np.cumsum(study_seconds(study)[orders[(n, sampler)]], axis=1)
        n_orders_used = len(orders[(n, sampler)])
        frames.append(pd.DataFrame({
            **dict(zip(cells, key, strict=False)), "study": len(frames),
            "order": np.repeat(np.arange(n_orders_used), n),
            "trials": np.tile(np.arange(1, n + 1), n_orders_used),
            **{column: curve.ravel() for column, curve in values.items()},
        }))  # fmt: skip
    measured = ["value", "normalized", "seconds"]
    columns = [*cells, "order", "trials", *measured]
    if not frames:
        return pd.DataFrame(columns=columns)
    curves = pd.concat(frames, ignore_index=True)
    length = curves.groupby(["dataset", "study"])["trials"].transform("max")
    curves = curves[curves["trials"] <= length.groupby(curves["dataset"]).transform("min")]
    return curves.groupby(columns[:-len(measured)], as_index=False)[measured].mean()


def study_seconds(study: pd.DataFrame) -> np.ndarray:
    """Each counted trial's wall time (trial_seconds); a failed trial, which logs none, as 0 s;
    all NaN for a study that logged no time (runs from before trial_seconds)."""
    seconds = study["seconds"].to_numpy(dtype=float)
    return np.nan_to_num(seconds) if not np.isnan(seconds).all() else seconds


def order_bands(curves: pd.DataFrame, keys: list[str], column: str) -> pd.DataFrame:
    """Per column (`keys`) and number of trials: the mean, min and max over orders of `column`
    (Grinsztajn et al.'s line and ribbon, analyses/plot_utils.R)."""
    return curves.groupby([*keys, "trials"])[column].agg(["mean", "min", "max"]).reset_index()


def orders_legend(curves: pd.DataFrame, keys: list[str]) -> str:
    """What the lines and bands of a best-so-far figure average: the number of orders of the
    random searches (a range if their trial counts differ) and TPE's single real order."""
    random = curves[curves["method"].map(lambda label: tuned_parts(label)[1]) == RANDOM_SAMPLER]
    counts = sorted(set(random.groupby(keys)["order"].nunique()))
    parts = []
    if counts:
        n = f"{counts[0]}" if len(counts) == 1 else f"{counts[0]}-{counts[-1]}"
        parts.append(f"random search: trial 0 (the default) first, mean over {n} orders of the "
                     "others, band min-max over orders")
    if len(random) < len(curves):
        parts.append("TPE: its trials in their real order")
    return "; ".join(parts)


def best_so_far_figure(curves: pd.DataFrame, metric: str) -> Figure:
    """One panel per dataset (the metric) and a last panel of the normalized curves averaged
    over datasets per order (Grinsztajn et al.'s aggregate); one line per column (method,
    engine[, encoding]: `column_keys`): the mean over orders, its band min-max over orders."""
    keys = column_keys(curves)
    datasets = sorted(curves["dataset"].unique())
    panels = len(datasets) + 1
    n_cols = min(3, panels)
    n_rows = -(-panels // n_cols)
    figure, axes = plt.subplots(n_rows, n_cols, figsize=(4.2 * n_cols, 3.2 * n_rows),
                                squeeze=False, layout="constrained")  # fmt: skip
    colors = hues(sorted(curves.groupby(keys).groups), keys)
    over_datasets = curves.groupby([*keys, "order", "trials"], as_index=False)["normalized"].mean()
    score = CURVE_SCORES[metric]
    anchor = "median" if score.quantile == 0.5 else f"{score.quantile:.0%} quantile"
    sources = [(dataset, order_bands(curves[curves["dataset"] == dataset], keys, "value"),
                metric) for dataset in datasets]  # fmt: skip
    sources.append(("normalized, mean over datasets",
                    order_bands(over_datasets, keys, "normalized"),
                    f"normalized score (1: best trial, 0: {anchor})"))  # fmt: skip
    for ax, (title, bands, label) in zip(axes.flat, sources, strict=False):
        for key, line in bands.groupby(keys):
            ax.plot(line["trials"], line["mean"], engine_style(key[1]), color=colors[key],
                    label=column_label(key))  # fmt: skip
            ax.fill_between(line["trials"], line["min"], line["max"], color=colors[key],
                            alpha=0.2, linewidth=0)  # fmt: skip
        ax.set_title(title)
        ax.set_xlabel("trials")
        ax.set_ylabel(label)
    for ax in axes.flat[panels:]:
        ax.axis("off")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="outside lower center", ncols=min(4, len(labels)),
                  title=f"{' / '.join(keys)}: outer test score of the trial the tuner would "
                        f"choose among the first k\n{orders_legend(curves, keys)}")  # fmt: skip
    return figure


def best_so_far_time_figure(curves: pd.DataFrame, metric: str) -> Figure:
    """The best-so-far curves of `best_so_far_curves` against time, one panel per dataset (time
    scales differ: no mean over datasets): a column's point k at the mean over orders of the
    mean cumulative trial seconds of its first k trials (over seeds and outer splits; TPE: its
    real order, a random search: its `trial_orders`), at the height of the curve against
    trials (the mean over orders of the chosen trial's outer test score), the band min-max over
    orders of that score, on a log time axis; the sampler's own time between trials (in
    tune_seconds) left out, and the columns that logged no trial seconds."""
    timed = curves[curves["seconds"].notna()]
    keys = column_keys(timed)
    datasets = sorted(timed["dataset"].unique())
    n_cols = min(3, len(datasets))
    n_rows = -(-len(datasets) // n_cols)
    figure, axes = plt.subplots(n_rows, n_cols, figsize=(4.2 * n_cols, 3.2 * n_rows),
                                squeeze=False, layout="constrained")  # fmt: skip
    colors = hues(sorted(timed.groupby(keys).groups), keys)
    for ax, dataset in zip(axes.flat, datasets, strict=False):
        on_dataset = timed[timed["dataset"] == dataset]
        seconds = on_dataset.groupby([*keys, "trials"])["seconds"].mean()
        bands = order_bands(on_dataset, keys, "value").join(seconds, on=[*keys, "trials"])
        for key, line in bands.groupby(keys):
            ax.plot(line["seconds"], line["mean"], engine_style(key[1]), color=colors[key],
                    label=column_label(key))  # fmt: skip
            ax.fill_between(line["seconds"], line["min"], line["max"], color=colors[key],
                            alpha=0.2, linewidth=0)  # fmt: skip
        ax.set_xscale("log")
        ax.set_title(dataset)
        ax.set_xlabel("seconds of the first k trials\n(cumulative, mean over studies and orders)")
        ax.set_ylabel(metric)
    for ax in axes.flat[len(datasets):]:
        ax.axis("off")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="outside lower center", ncols=min(4, len(labels)),
                  title=f"{' / '.join(keys)}: outer test score of the trial the tuner would "
                        f"choose among the first k, against the time they took\n"
                        f"{orders_legend(timed, keys)}")  # fmt: skip
    return figure


COST_STATISTICS = ["jobs", "datasets", "seconds", "trials", "trials_per_minute", "failed",
                   "timed_out", "infeasible"]  # fmt: skip


def tuning_cost(runs: pd.DataFrame) -> pd.DataFrame:
    """Per tuned column (method, sampler, engine[, encoding]) over all its runs (every dataset
    and seed): jobs, datasets, and per study (the tuning of one outer split; a job's tune_*
    metrics are the means over its splits, experiments.tuning.search) the mean tune_seconds,
    the mean trials the tuner counts (tune_trials, scored, + tune_failed_trials), trials per
    minute = 60 x mean trials / mean seconds, and the mean tune_failed_trials, of them
    tune_timed_out_trials (stopped at tune.trial_seconds), and tune_infeasible_trials
    (resampled, not counted)."""
    columns = [*tuned_keys(column_keys(runs)), *COST_STATISTICS]
    if "tune_seconds" not in runs.columns:
        return pd.DataFrame(columns=columns)
    tuned = runs[runs["tune_seconds"].notna()]
    keys = column_keys(tuned)
    rows = []
    for (label, *rest), group in tuned.groupby(keys):
        method, sampler = tuned_parts(label)
        failed = group.get("tune_failed_trials", pd.Series(np.nan, index=group.index))
        infeasible = group.get("tune_infeasible_trials", pd.Series(np.nan, index=group.index))
        timed_out = group.get("tune_timed_out_trials", pd.Series(np.nan, index=group.index))
        trials = (group["tune_trials"] + failed.fillna(0)).mean()
        seconds = group["tune_seconds"].mean()
        rows.append({**dict(zip(keys, (method, *rest), strict=True)), "sampler": sampler,
                     "jobs": len(group), "datasets": group["dataset"].nunique(),
                     "seconds": seconds, "trials": trials,
                     "trials_per_minute": 60 * trials / seconds, "failed": failed.mean(),
                     "timed_out": timed_out.mean(), "infeasible": infeasible.mean()})  # fmt: skip
    return pd.DataFrame(rows, columns=[*tuned_keys(keys), *COST_STATISTICS])


def format_tuning_cost(cost: pd.DataFrame) -> TextTable:
    """The tuning cost per column (`tuning_cost`) as a table, nothing emphasized."""
    caption = (
        "Tuning cost per column (method / engine, sampler) over all its ok tuned runs (every "
        "dataset and seed; datasets: how many): per study (the tuning of one outer split on its "
        "training rows: a job runs one per outer split), the mean wall seconds of the search "
        "(tune_seconds: every trial and the sampler), the mean trials counted (scored + "
        "failed: tune.n_trials unless tune.timeout_seconds ended it), trials per minute = 60 x "
        "trials / seconds, and the mean failed trials (raised, or stopped at "
        "tune.trial_seconds: timed out; counted, never chosen) and infeasible ones (values "
        "the engine cannot run on the data: resampled, not counted). "
        "Scores: the default-vs-tuned tables."
    )
    keys = key_columns(cost)
    index = [f"{column_label(tuple(row[keys]))} ({row['sampler']})"
             for _, row in cost.iterrows()]  # fmt: skip
    formats = {"jobs": ("jobs", "d"), "datasets": ("datasets", "d"),
               "seconds": ("seconds / study", ".3g"), "trials": ("trials / study", ".3g"),
               "trials_per_minute": ("trials / minute", ".3g"),
               "failed": ("failed / study", ".3g"), "timed_out": ("of them timed out", ".3g"),
               "infeasible": ("infeasible / study", ".3g")}
    cells = pd.DataFrame(
        {header: [MISSING if pd.isna(v) else format(v, spec) for v in cost[column]]
         for column, (header, spec) in formats.items()},
        index=pd.Index(index, name=f"{' / '.join(keys)} (sampler)"),
    )  # fmt: skip
    bold = pd.DataFrame(False, index=cells.index, columns=cells.columns)
    return TextTable("tuning cost", caption, cells, bold)
