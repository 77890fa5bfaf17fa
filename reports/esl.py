"""ESL Figure 10.2 (Hastie, Tibshirani and Friedman 2009, section 10.1): AdaBoost's test error
against boosting rounds beside a single stump and a 244-node tree, per engine, with the book's
values marked."""

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.figure import Figure

from reports.styles import engine_style
from reports.tables import column_keys

BOOSTED, STUMP, TREE = "adaboost_400", "stump", "large_tree"
ESL_METHODS = (BOOSTED, STUMP, TREE)
ESL_CURVE = "curve_test_error"
BOOK_TEST_ERROR = {STUMP: 0.458, TREE: 0.247, BOOSTED: 0.058}  # ESL 2nd ed., Figure 10.2
LABELS = {STUMP: "single stump", TREE: "244-node tree"}


def esl_datasets(runs: pd.DataFrame) -> list[str]:
    """The datasets on which the ok runs hold all three models of section 10.1."""
    present = runs.groupby("dataset")["method"].agg(set)
    return sorted(dataset for dataset, methods in present.items() if set(ESL_METHODS) <= methods)


def _lines(frame: pd.DataFrame, keys: list[str]) -> set[tuple[str, ...]]:
    """The distinct values of the `keys` columns of `frame`, as tuples."""
    return set(frame[keys].itertuples(index=False, name=None))


def esl_figure(curves: pd.DataFrame, runs: pd.DataFrame, dataset: str) -> Figure:
    """`curves`: the curve_test_error long table (dataset, method, engine, [encoding,] seed,
    rounds, value); `runs`: ok runs with test_error. On `dataset`, per engine (solid in-house,
    dashed scikit-learn, others dotted; per engine and encoding where the dataset's runs have
    more than one, `column_keys`), the mean over seeds of AdaBoost's curve and horizontal lines
    at the stump's and the tree's mean test errors; the book's values as grey marks."""
    curves = curves[curves["dataset"] == dataset]
    runs = runs[runs["dataset"] == dataset]
    figure, ax = plt.subplots(figsize=(7, 4.5), layout="constrained")
    line_keys = column_keys(runs)[1:]
    colors = {BOOSTED: "tab:orange", STUMP: "tab:blue", TREE: "tab:green"}
    boosted = curves[curves["method"] == BOOSTED]
    last_round = int(boosted["rounds"].max()) if not boosted.empty else 400
    for line_key in sorted(_lines(curves, line_keys) | _lines(runs, line_keys)):
        style, name = engine_style(line_key[0]), " / ".join(line_key)
        on_boosted = (boosted[line_keys] == list(line_key)).all(axis=1)
        line = boosted[on_boosted].groupby("rounds")["value"].mean()
        if not line.empty:
            ax.plot(line.index, line.to_numpy(), style, color=colors[BOOSTED],
                    label=f"AdaBoost, {name} (last {line.iloc[-1]:.1%})")  # fmt: skip
        on_line = (runs[line_keys] == list(line_key)).all(axis=1)
        for method in (STUMP, TREE):
            errors = runs[on_line & (runs["method"] == method)]["test_error"]
            if errors.notna().any():
                ax.hlines(errors.mean(), 0, last_round, linestyle=style, color=colors[method],
                          label=f"{LABELS[method]}, {name} ({errors.mean():.1%})")  # fmt: skip
    mark_x = last_round * 1.02
    for method, error in BOOK_TEST_ERROR.items():
        label = "ESL Fig. 10.2 (book)" if method == BOOSTED else None
        ax.plot([mark_x], [error], "<", color="grey", markersize=7, label=label)
        ax.annotate(f"{error:.1%}", (mark_x, error), xytext=(6, 0), textcoords="offset points",
                    va="center", fontsize=8, color="grey")  # fmt: skip
    ax.set_xlabel("boosting iterations (rounds)")
    ax.set_ylabel("test error (mean over seeds)")
    ax.set_ylim(0, 0.5)
    ax.set_xlim(0, last_round * 1.12)
    ax.set_title(f"AdaBoost of stumps on {dataset} (ESL Figure 10.2)")
    figure.legend(loc="outside lower center", ncols=3, fontsize=8)
    return figure
