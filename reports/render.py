"""Format aggregated tables as text and render them as markdown pipe tables or booktabs LaTeX."""

import math
import re
from dataclasses import dataclass

import pandas as pd
from tabulate import tabulate

from reports.across import ROPE, scale
from reports.stats import ALPHA, MIN_DATASETS, MIN_RESAMPLES, FriedmanResult, average_ranks
from reports.tables import ERROR_RATES, MetricTable, column_label
from reports.verdicts import BEST, RESAMPLES, TIE, UNTESTED, verdict_grid

PLUS_MINUS = "±"
MISSING = "–"
AVERAGE_RANK = "average rank"
WITHHELD = "withheld"
NONE = "none"  # the row of an empty list
APPROXIMATE = "≈"  # a column header's mark: its engine approximates the method
CORRECTED_T = (
    "Nadeau and Bengio's 2003 corrected resampled t-test on the J values paired by seed and "
    "split, t = mean(d) / sqrt((1/J + n_test/n_train) s^2) with J - 1 df (Bouckaert and Frank "
    "2004 for repeated k-fold)"
)
ERROR_FLOOR = (
    "for an error rate, s^2 at least (|mean(d)| - mean(d)^2) / n_test, the least variance of "
    "a difference of error rates on n_test test rows, so that equal differences on every seed "
    "are never significant by themselves"
)
LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    PLUS_MINUS: r"$\pm$",
    APPROXIMATE: r"$\approx$",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
    MISSING: "--",
}


@dataclass(frozen=True)
class TextTable:
    """A table ready to render: string cells (index = row labels, columns = header labels), the
    cells to set in bold and to underline (None: none), a title and a caption. Any aggregate can
    be formatted into one."""

    title: str
    caption: str
    cells: pd.DataFrame
    bold: pd.DataFrame
    underline: pd.DataFrame | None = None
    italic: pd.DataFrame | None = None

    def marks(self, name: str) -> pd.DataFrame:
        """The marks `name` (underline, italic), all False when none were given."""
        given = getattr(self, name)
        if given is None:
            return pd.DataFrame(False, index=self.cells.index, columns=self.cells.columns)
        return given


def row_decimals(means: pd.Series, significant: int = 3) -> int:
    """Decimals giving the row's largest |mean| `significant` significant digits (0 to 6)."""
    largest = means.abs().max()
    if not largest > 0:
        return significant
    return min(max(significant - 1 - math.floor(math.log10(largest)), 0), 6)


def format_cell(mean: float, std: float, decimals: int) -> str:
    """`mean ± std` with fixed decimals; the mean alone if std is undefined, MISSING if no mean."""
    if math.isnan(mean):
        return MISSING
    if math.isnan(std):
        return f"{mean:.{decimals}f}"
    return f"{mean:.{decimals}f} {PLUS_MINUS} {std:.{decimals}f}"


def format_count(n: int, resamples: int) -> str:
    """` [n/N]` after a cell's numbers when it has n of its row's N resamples, else nothing."""
    return f" [{n}/{resamples}]" if n < resamples else ""


def metric_legend(metric: str) -> str:
    """What a metric table's numbers, emphasis and marks mean."""
    floor = f"; {ERROR_FLOOR}" if metric in ERROR_RATES else ""
    return (
        f"Mean {PLUS_MINUS} sample std (ddof=1) over the resamples (seeds x splits) of each "
        "cell's ok runs. Verdicts within each dataset (verdicts.csv): bold = best, the lowest "
        "mean among the cells with every resample of their row; underlined = tie, not "
        "significantly different from the bold cell; plain = worse, significantly worse than it "
        f"({CORRECTED_T}{floor}; Holm-adjusted over the row's tested cells, alpha {ALPHA}); "
        f"italic = untested: fewer than {MIN_RESAMPLES} paired resamples, split sizes unknown, "
        "a resample missing, or the same difference on every resample of a metric that is not "
        "an error rate (nothing to test). [n/N]: the cell has n of its row's N resamples, the "
        "(seed, split) pairs at least half of its cells have (a failed, missing or unfinished "
        f"run, a value left out: see failures); {MISSING}: no ok run."
    )


def approximation_marks(table: MetricTable,
                        notes: dict[tuple[str, ...], list[str]]) -> tuple[list[str], str]:
    """The table's headers (`column_label`, then ` ≈1,2` on a column whose runs carry the
    approximation notes 1 and 2 of `notes`) and the legend of those numbers ('' without any)."""
    numbered: dict[str, int] = {}
    headers = []
    for column in table.mean.columns:
        marks = [numbered.setdefault(note, len(numbered) + 1) for note in notes.get(column, [])]
        suffix = f" {APPROXIMATE}{','.join(map(str, marks))}" if marks else ""
        headers.append(column_label(column) + suffix)
    legend = "; ".join(f"{APPROXIMATE}{n}: {note}" for note, n in numbered.items())
    return headers, (f" {APPROXIMATE}n: the engine of this column approximates the method on "
                     f"some runs, by design ({legend}).") if numbered else ""


def format_metric_table(table: MetricTable, found: pd.DataFrame,
                        block: pd.DataFrame | None = None,
                        notes: dict[tuple[str, ...], list[str]] | None = None) -> TextTable:
    """Cells `mean ± std [n/N]` with per-dataset decimals, headers `column_label` (with the
    `approximation_marks` of `notes`), emphasis from the verdict rows `found` (bold best,
    underlined tie, italic untested); an `average rank` last row over `block`
    (`stats.ranking_block`) when given."""
    verdict, resamples = verdict_grid(found, table, "verdict"), verdict_grid(found, table,
                                                                              RESAMPLES)
    rows = {}
    for dataset, means in table.mean.iterrows():
        decimals = row_decimals(means)
        rows[dataset] = [
            format_cell(m, s, decimals) + (format_count(n, resamples.loc[dataset, c]) if n else "")
            for c, m, s, n in zip(means.index, means, table.std.loc[dataset],
                                  table.count.loc[dataset], strict=True)
        ]
    headers, approximated = approximation_marks(table, notes or {})
    index = pd.Index(list(rows), name="dataset")
    marks = {name: pd.DataFrame(verdict.eq(value).to_numpy(bool), index=index, columns=headers)
             for name, value in (("bold", BEST), ("underline", TIE), ("italic", UNTESTED))}
    caption = metric_legend(table.metric) + approximated
    if block is not None:
        rows[AVERAGE_RANK] = [MISSING if math.isnan(r) else f"{r:.2f}"
                              for r in average_ranks(block).reindex(table.mean.columns)]
        for frame in marks.values():
            frame.loc[AVERAGE_RANK] = False
        caption += " " + ranks_legend(table, block)
    cells = pd.DataFrame.from_dict(rows, orient="index", columns=headers)
    cells.index.name = "dataset"
    return TextTable(title=table.metric, caption=caption, cells=cells, **marks)


def ranks_legend(table: MetricTable, block: pd.DataFrame) -> str:
    """Over which datasets and columns the average rank row is computed, and the rule."""
    left_out = [column_label(c) for c in table.mean.columns if c not in block.columns]
    dropped = (f"; left out of the ranks ({MISSING} in this row): {', '.join(left_out)}"
               if left_out else "")
    return (
        f"{AVERAGE_RANK}: mean per-dataset rank (1 = best, ties averaged) over the "
        f"{len(block)} of {len(table.mean)} datasets on which its {block.shape[1]} columns all "
        "have every resample (columns present on the fewest datasets are dropped first while "
        f"that gives more ranked cells){dropped}."
    )


def format_verdict_counts(counts: pd.DataFrame, metric: str) -> TextTable:
    """Per column, on how many datasets its verdict was best, tie, worse or untested."""
    caption = (
        f"Counts of the per-dataset verdicts of the {metric} table (verdicts.csv): best is a "
        "win, worse a loss, tie neither; untested cells are counted apart, never as ties. Counts "
        "of per-dataset tests, not an across-dataset test (for that: across datasets)."
    )
    cells = counts.map(str)
    cells.index.name = "column"
    return _plain(f"{metric}: verdict counts", caption, cells)


def format_across(comparison: pd.DataFrame, metric: str, baseline: tuple[str, ...]) -> TextTable:
    """Every column against the baseline across datasets: Wilcoxon-Holm and Bayesian signed rank
    (reports.across)."""
    unit = ("difference" if scale(metric) == "absolute"
            else "log ratio")  # fmt: skip
    caption = (
        f"Each column against {column_label(baseline)} over the datasets where both have every "
        f"resample (the dataset is the unit: its mean). median {unit} (> 0: worse than the "
        "baseline); p: Wilcoxon signed-rank, two-sided, Holm-adjusted over the columns (Demsar "
        f"2006), {WITHHELD} below 6 datasets (the smallest p is 2/2^N); p_better, p_rope, "
        "p_worse: posterior probabilities of the Bayesian signed-rank test (Benavoli et al. "
        f"2017, baycomp) that the column is better, practically equivalent (|{unit}| < "
        f"{ROPE[scale(metric)]:.3g}) or worse, {WITHHELD} below {MIN_DATASETS} datasets."
    )

    def shown(value: float, spec: str) -> str:
        return WITHHELD if math.isnan(value) else format(value, spec)

    cells = pd.DataFrame(
        {
            "datasets": [str(n) for n in comparison["datasets"]],
            f"median {unit}": [shown(v, ".3g") for v in comparison["median_difference"]],
            "p (Holm)": [shown(v, ".3g") for v in comparison["p_holm"]],
            **{name: [shown(v, ".2f") for v in comparison[name]]
               for name in ("p_better", "p_rope", "p_worse")},
        },
        index=pd.Index([column_label(c) for c in comparison.index], name="column"),
    )
    bold = pd.DataFrame(False, index=cells.index, columns=cells.columns)
    bold["p (Holm)"] = (comparison["p_holm"] < ALPHA).to_numpy()
    return TextTable(f"{metric}: across datasets vs {column_label(baseline)}", caption, cells,
                     bold)


def format_failures(rows: pd.DataFrame) -> TextTable:
    """The runs the tables lack or replaced (reports.failures), one line each; a row `none` when
    there are none."""
    caption = (
        "Jobs whose cells hold fewer resamples ([n/N] in the tables) and results a rerun "
        "replaced: failed (its error line), unfinished, or an ok run left out for a later one."
    )
    cells = rows.set_index("dataset").astype(str)
    if cells.empty:
        cells.loc[NONE] = MISSING
    return _plain("failures and reruns", caption, cells)


def _format_numbers(frame: pd.DataFrame, formats: dict[str, str]) -> pd.DataFrame:
    """String cells of `frame` (rows: table columns, `column_label`) by column format specs;
    MISSING for NaN."""
    return pd.DataFrame(
        {
            column: [MISSING if pd.isna(v) else format(v, formats[column]) for v in frame[column]]
            for column in formats
        },
        index=[column_label(column) for column in frame.index],
    ).rename_axis(" / ".join(frame.index.names))


def _plain(title: str, caption: str, cells: pd.DataFrame) -> TextTable:
    """A TextTable with nothing emphasized."""
    return TextTable(
        title=title,
        caption=caption,
        cells=cells,
        bold=pd.DataFrame(False, index=cells.index, columns=cells.columns),
    )


def format_timing_table(timing: pd.DataFrame) -> TextTable:
    """Median seconds per column and the in-house / reference time ratios."""
    caption = (
        "Median fit and predict seconds over all ok runs (every dataset and seed); ratios: "
        "median over the jobs run by both (same method, loss, dataset, encoding, seed) of "
        "in-house time / this engine's time (> 1: in-house slower)."
    )
    formats = {
        "jobs": "d",
        "fit_seconds": ".3g",
        "predict_seconds": ".3g",
        "fit_ratio": ".2f",
        "predict_ratio": ".2f",
    }
    return _plain("timing", caption, _format_numbers(timing, formats))


def format_parity_table(parity: pd.DataFrame) -> TextTable:
    """Largest parity_max_abs_diff and mean parity_metric_diff per reference column."""
    caption = (
        "Parity runs against the in-house engine: largest parity_max_abs_diff (prediction) and "
        "mean parity_metric_diff over the ok runs."
    )
    formats = {"runs": "d", "max_abs_diff": ".3g", "mean_metric_diff": ".3g"}
    return _plain("parity", caption, _format_numbers(parity, formats))


def format_friedman_table(results: list[FriedmanResult]) -> TextTable:
    """One row per metric: k, N, Friedman chi2_F and p, Iman-Davenport F_F, Nemenyi CD; with
    fewer than MIN_DATASETS datasets (FriedmanResult.claims) the test's cells read WITHHELD."""

    def shown(result: FriedmanResult, value: float) -> str:
        return f"{value:.3g}" if result.claims else WITHHELD

    cells = pd.DataFrame(
        {
            "k": [str(len(r.avg_ranks)) for r in results],
            "N": [str(r.n_datasets) for r in results],
            "chi2_F": [shown(r, r.chi2) for r in results],
            "p": [shown(r, r.pvalue) for r in results],
            "F_F": [shown(r, r.iman_davenport) for r in results],
            "CD": [shown(r, r.cd) for r in results],
        },
        index=pd.Index([r.metric for r in results], name="metric"),
    )
    left_out = "; ".join(f"{r.metric}: {', '.join(column_label(c) for c in r.left_out)}"
                         for r in results if r.left_out)  # fmt: skip
    caption = (
        "Friedman test over the N datasets on which its k columns all have every resample (the "
        "dataset is the unit: its mean over seeds and splits; scipy, tie-corrected; the columns "
        "of the average rank row), Iman-Davenport F_F, and the Nemenyi critical difference CD "
        f"at alpha {ALPHA} (Demsar 2006); with fewer than {MIN_DATASETS} datasets the test "
        f"claims nothing: {WITHHELD}, and no CD diagram."
        + (f" Columns left out (present on too few datasets): {left_out}." if left_out else "")
    )
    return _plain("friedman", caption, cells)


def _emphasize(cells: pd.DataFrame, marks: pd.DataFrame, template: str) -> pd.DataFrame:
    """`cells`, those marked in `marks` wrapped in the format string `template`."""
    return cells.where(~marks.astype(bool), cells.map(template.format))


def to_markdown(tables: list[TextTable]) -> str:
    """One `## title` section per table: a pipe table (bold `**...**`, underlined `<u>...</u>`,
    italic `*...*`), then its caption, the legend under the table."""
    sections = []
    for table in tables:
        cells = _emphasize(table.cells, table.marks("italic"), "*{}*")
        cells = _emphasize(cells, table.marks("underline"), "<u>{}</u>")
        cells = _emphasize(cells, table.bold, "**{}**")
        body = tabulate(
            cells,
            headers=[cells.index.name, *cells.columns],
            tablefmt="pipe",
            colalign=["left"] + ["right"] * len(cells.columns),
            disable_numparse=True,
        )
        sections.append(f"## {table.title}\n\n{body}\n\n{table.caption}\n")
    return "\n".join(sections)


def latex_escape(text: str) -> str:
    """`text` with LaTeX special characters escaped (and ± as `$\\pm$`, – as `--`)."""
    return "".join(LATEX_SPECIAL.get(char, char) for char in text)


def label_key(title: str) -> str:
    """A LaTeX label key from a title: runs of characters other than letters and digits as `-`."""
    return "-".join(part for part in re.split(r"[^A-Za-z0-9]+", title) if part)


def to_latex(tables: list[TextTable]) -> str:
    """One complete booktabs `table` environment per table (needs `\\usepackage{booktabs}`)."""
    environments = []
    for table in tables:
        cells = _emphasize(table.cells.map(latex_escape), table.marks("italic"), r"\textit{{{}}}")
        cells = _emphasize(cells, table.marks("underline"), r"\underline{{{}}}")
        cells = _emphasize(cells, table.bold, r"\textbf{{{}}}")
        header = " & ".join(latex_escape(label) for label in [cells.index.name, *cells.columns])
        lines = [
            r"\begin{table}[htbp]",
            r"  \centering",
            rf"  \caption{{{latex_escape(f'{table.title}: {table.caption}')}}}",
            rf"  \label{{tab:{label_key(table.title)}}}",
            rf"  \begin{{tabular}}{{l{'r' * len(cells.columns)}}}",
            r"    \toprule",
            rf"    {header} \\",
            r"    \midrule",
            *(
                rf"    {' & '.join([latex_escape(str(label)), *row])} \\"
                for label, row in zip(cells.index, cells.to_numpy().tolist(), strict=True)
            ),
            r"    \bottomrule",
            r"  \end{tabular}",
            r"\end{table}",
        ]
        environments.append("\n".join(lines) + "\n")
    return "% Needs \\usepackage{booktabs}.\n" + "\n".join(environments)
