"""Friedman, Hastie and Tibshirani (2000, "Additive logistic regression: a statistical view of
boosting", Ann. Statist. 28(2), sec. 6), the simulation study of preset fht2000: test error
against boosting iterations of Discrete, Real and Gentle AdaBoost and LogitBoost, one panel per
tree size, and the errors at given iteration counts beside the paper's."""

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.figure import Figure

from reports.render import MISSING, TextTable
from reports.runs import method_option
from reports.styles import engine_style

FHT_CURVE = "curve_test_error"
TREE_SIZE_PARAM = "method.max_depth"  # a depth-d tree has at most 2^d terminal nodes
ALGORITHMS = {  # method option -> FHT's name
    "adaboost": "Discrete AdaBoost",
    "real_adaboost": "Real AdaBoost",
    "gentle_adaboost": "Gentle AdaBoost",
    "logitboost": "LogitBoost",
}
COLORS = dict(zip(ALGORITHMS, ("tab:blue", "tab:orange", "tab:green", "tab:red"), strict=True))
TABLE_ROUNDS = (100, 200, 400, 800)
# FHT's test errors by (terminal nodes, method option, iterations), read off the paper. None
# is entered: no copy of its section 6 was at hand where this was built (docs/reproductions.md),
# so the table's paper column reads MISSING until they are.
PAPER_TEST_ERROR: dict[tuple[int, str, int], float] = {}


def fht_datasets(runs: pd.DataFrame) -> list[str]:
    """The datasets on which the ok runs hold Real or Gentle AdaBoost, the algorithms FHT
    introduce (method options, whatever their tree sizes: reports.runs.split_methods); the
    figure and the table show whichever of the four algorithms ran there."""
    present = runs["method"].map(method_option).groupby(runs["dataset"]).agg(set)
    return sorted(dataset for dataset, methods in present.items()
                  if methods & {"real_adaboost", "gentle_adaboost"})  # fmt: skip


def terminal_nodes(max_depth: str | int) -> int:
    """FHT count a tree by its terminal nodes: 2^max_depth for the full trees grown here."""
    return 2 ** int(max_depth)


def panel_title(nodes: int) -> str:
    """FHT's name of a tree size and the depth that grows it here."""
    depth = int(nodes).bit_length() - 1
    return f"stumps (depth {depth})" if nodes == 2 else f"{nodes}-node trees (depth {depth})"


def mean_curves(curves: pd.DataFrame) -> pd.DataFrame:
    """`curves` (the curve_test_error long table with the runs' terminal `nodes`) averaged over
    seeds: nodes, method, engine, rounds, value (the mean) and runs (how many seeds)."""
    grouped = curves.groupby(["nodes", "method", "engine", "rounds"])["value"]
    return grouped.agg(value="mean", runs="count").reset_index()


def _lines(mean: pd.DataFrame, nodes: int) -> list[tuple[str, str, pd.DataFrame]]:
    """(method, engine, its mean curve) of one tree size, FHT's algorithms in their order."""
    sized = mean[mean["nodes"] == nodes]
    return [(method, engine, line) for method in ALGORITHMS
            for engine, line in sized[sized["method"] == method].groupby("engine")]  # fmt: skip


def fht_figure(mean: pd.DataFrame, dataset: str) -> Figure:
    """One panel per tree size: the mean test error over seeds of each algorithm against the
    boosting iterations (FHT sec. 6's figures), the paper's values, where entered, as marks."""
    sizes = sorted(mean["nodes"].unique())
    figure, axes = plt.subplots(1, len(sizes), figsize=(4.2 * len(sizes), 4), sharey=True,
                                layout="constrained", squeeze=False)  # fmt: skip
    for ax, nodes in zip(axes[0], sizes, strict=True):
        for method, engine, line in _lines(mean, nodes):
            label = f"{ALGORITHMS[method]}, {engine} (last {line['value'].iloc[-1]:.1%})"
            ax.plot(line["rounds"], line["value"], engine_style(engine), color=COLORS[method],
                    label=label)  # fmt: skip
        for (size, method, rounds), error in PAPER_TEST_ERROR.items():
            if size == nodes:
                ax.plot([rounds], [error], "o", mfc="none", color=COLORS[method])
        ax.set_title(panel_title(nodes))
        ax.set_xlabel("boosting iterations")
        ax.legend(fontsize=7)
    axes[0][0].set_ylabel("test error (mean over seeds)")
    figure.suptitle(f"{dataset}: Friedman, Hastie and Tibshirani (2000), sec. 6")
    return figure


def fht_table(mean: pd.DataFrame, dataset: str) -> TextTable:
    """Rows (tree size, algorithm, engine), columns: our mean test error at each of
    TABLE_ROUNDS present in the curves and the paper's there (MISSING where not entered)."""
    rounds = [r for r in TABLE_ROUNDS if r in set(mean["rounds"])]
    rows = {}
    for nodes in sorted(mean["nodes"].unique()):
        for method, engine, line in _lines(mean, nodes):
            at = line.set_index("rounds")["value"]
            cells = {}
            for r in rounds:
                cells[f"ours @{r}"] = f"{at[r]:.3f}" if r in at.index else MISSING
                paper = PAPER_TEST_ERROR.get((nodes, method, r))
                cells[f"FHT @{r}"] = MISSING if paper is None else f"{paper:.3f}"
            cells["seeds"] = str(int(line["runs"].max()))
            rows[f"{panel_title(nodes)} / {ALGORITHMS[method]} / {engine}"] = cells
    cells = pd.DataFrame.from_dict(rows, orient="index").rename_axis("trees / algorithm / engine")
    caption = (
        f"{dataset}: test error, mean over seeds, at the given boosting iterations, beside "
        "Friedman, Hastie and Tibshirani (2000, Ann. Statist. 28(2), sec. 6) where a value of "
        f"theirs is entered ({MISSING}: none; see docs/reproductions.md)."
    )
    bold = pd.DataFrame(False, index=cells.index, columns=cells.columns)
    return TextTable(title=f"FHT (2000) simulation: {dataset}", caption=caption, cells=cells,
                     bold=bold)  # fmt: skip
