"""The simulation design of Friedman, Hastie and Tibshirani (2000, "Additive logistic regression:
a statistical view of boosting", Ann. Statist. 28(2), sec. 6), rerun by preset fht2000: test
error against boosting iterations of Discrete, Real and Gentle AdaBoost under both K-class
schemes (SAMME / SAMME.R of Zhu et al. 2009, and AdaBoost.MH of FHT's section 8) and of
LogitBoost, one panel per tree size J (terminal nodes, the runs' max_leaf_nodes), and the
errors at given iteration counts beside the paper's."""

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib import colormaps
from matplotlib.figure import Figure

from reports.render import MISSING, TextTable
from reports.runs import method_option
from reports.styles import engine_style

FHT_CURVE = "curve_test_error"
TREE_SIZE_PARAM = "method.max_leaf_nodes"  # J terminal nodes, grown best first
NO_LEAF_LIMIT = 0  # terminal_nodes of a run without max_leaf_nodes: not an FHT tree size
ALGORITHMS = {  # method option -> FHT's name, and the scheme for K > 2 classes
    "adaboost": "Discrete AdaBoost (SAMME)",
    "adaboost_mh": "Discrete AdaBoost.MH",
    "real_adaboost": "Real AdaBoost (SAMME.R)",
    "real_adaboost_mh": "Real AdaBoost.MH",
    "gentle_adaboost": "Gentle AdaBoost (one vs rest)",
    "gentle_adaboost_mh": "Gentle AdaBoost.MH",
    "logitboost": "LogitBoost",
}
# tab20's pairs: an algorithm's hue, dark for AdaBoost.MH, light for SAMME (the dash pattern
# is the engine's, as in every figure: reports.styles)
COLORS = dict(zip(ALGORITHMS, (colormaps["tab20"](i) for i in (1, 0, 3, 2, 5, 4, 6)),
                  strict=True))
TABLE_ROUNDS = (100, 200, 400, 800)
# FHT's test errors by (terminal nodes, method option, iterations), read off the paper. None
# is entered: no copy of its section 6 was at hand where this was built (docs/reproductions.md),
# so the table's paper column reads MISSING until they are.
PAPER_TEST_ERROR: dict[tuple[int, str, int], float] = {}


def fht_datasets(runs: pd.DataFrame) -> list[str]:
    """The datasets on which the ok runs hold Real or Gentle AdaBoost (either scheme), the
    algorithms FHT introduce (method options, whatever their tree sizes:
    reports.runs.split_methods); the figure and the table show whichever of ALGORITHMS ran
    there."""
    introduced = {"real_adaboost", "gentle_adaboost", "real_adaboost_mh", "gentle_adaboost_mh"}
    present = runs["method"].map(method_option).groupby(runs["dataset"]).agg(set)
    return sorted(dataset for dataset, methods in present.items() if methods & introduced)


MULTICLASS_PARAM = "method.multiclass"  # samme (the default) or mh
MH_SUFFIX = "_mh"


def algorithm_key(option: str, multiclass: str | None) -> str:
    """The ALGORITHMS key of a run of method option `option` logged with method.multiclass
    `multiclass`: `adaboost` run with multiclass=mh is `adaboost_mh`, as the preset's own
    option, so that a sweep over method.multiclass=samme,mh draws two lines, not their mean."""
    if multiclass == "mh" and option + MH_SUFFIX in ALGORITHMS:
        return option + MH_SUFFIX
    return option


def terminal_nodes(max_leaf_nodes: str | int | None) -> int:
    """FHT count a tree by its terminal nodes J: a run's max_leaf_nodes (its trees grown best
    first to J leaves); NO_LEAF_LIMIT for a run without one (logged as None, or not at all:
    trees of a depth), which mean_curves leaves out."""
    try:
        return int(max_leaf_nodes)
    except (TypeError, ValueError):
        return NO_LEAF_LIMIT


def panel_title(nodes: int) -> str:
    """FHT's name of a tree size J."""
    return f"stumps (J = {nodes})" if nodes == 2 else f"{nodes}-node trees"


def mean_curves(curves: pd.DataFrame) -> pd.DataFrame:
    """`curves` (the curve_test_error long table with the runs' terminal `nodes`) averaged over
    seeds: nodes, method, engine, rounds, value (the mean) and runs (how many seeds); the runs
    without a leaf limit (NO_LEAF_LIMIT) are left out."""
    sized = curves[curves["nodes"] != NO_LEAF_LIMIT]
    grouped = sized.groupby(["nodes", "method", "engine", "rounds"])["value"]
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
    figure.suptitle(f"{dataset}: the simulation design of Friedman, Hastie and Tibshirani "
                    "(2000, sec. 6), rerun")
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
        f"{dataset}: test error, mean over seeds, at the given boosting iterations, in the "
        "simulation design of Friedman, Hastie and Tibshirani (2000, Ann. Statist. 28(2), "
        "sec. 6), beside theirs where a value is entered "
        f"({MISSING}: none; see docs/reproductions.md)."
    )
    bold = pd.DataFrame(False, index=cells.index, columns=cells.columns)
    return TextTable(title=f"FHT (2000) simulation: {dataset}", caption=caption, cells=cells,
                     bold=bold)  # fmt: skip
