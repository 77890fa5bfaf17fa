"""Format aggregated tables as text and render them as markdown pipe tables or booktabs LaTeX."""

import math
import re
from dataclasses import dataclass

import pandas as pd
from tabulate import tabulate

from reports.stats import MIN_DATASETS, FriedmanResult
from reports.tables import MetricTable

PLUS_MINUS = "±"
MISSING = "–"
AVERAGE_RANK = "average rank"
WITHHELD = "withheld"
CORRECTED_T = (
    "Nadeau and Bengio's 2003 corrected resampled t-test on the values paired by seed and "
    "split: t = mean(d) / sqrt((1/J + n_test/n_train) s^2), J - 1 df, the variance inflated "
    "for the overlapping training sets of the J resamples"
)
UNTESTED = "the runs do not carry their split sizes, or one pair"
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

    @property
    def underlined(self) -> pd.DataFrame:
        """The underline marks, all False when none were given."""
        if self.underline is None:
            return pd.DataFrame(False, index=self.cells.index, columns=self.cells.columns)
        return self.underline


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


def column_label(column: tuple[str, ...]) -> str:
    """`method / engine` (`method / engine / encoding`), the header of a table's column."""
    return " / ".join(column)


def format_metric_table(
    table: MetricTable,
    underline: pd.DataFrame | None = None,
    avg_ranks: pd.Series | None = None,
) -> TextTable:
    """Cells `mean ± std` with per-dataset decimals; headers `column_label`; best in bold;
    `underline` marks (cells not significantly worse than the best); an `average rank` last row
    when `avg_ranks` is given."""
    rows = {}
    for dataset, means in table.mean.iterrows():
        decimals = row_decimals(means)
        stds = table.std.loc[dataset]
        rows[dataset] = [format_cell(m, s, decimals) for m, s in zip(means, stds, strict=True)]
    headers = [column_label(column) for column in table.mean.columns]
    bold = pd.DataFrame(table.best.to_numpy(), index=list(rows), columns=headers)
    marks = pd.DataFrame(False, index=list(rows), columns=headers)
    caption = (
        f"Mean {PLUS_MINUS} sample std (ddof=1) over all seeds and splits of the ok runs; "
        "lowest per dataset in bold."
    )
    if underline is not None:
        marks[:] = underline.reindex(index=table.mean.index, columns=table.mean.columns).fillna(
            False
        ).to_numpy(bool)
        caption += (
            f" Underlined: not significantly different from the best within the dataset "
            f"({CORRECTED_T}; Holm-corrected within the row, alpha 0.05); no mark where "
            f"untested ({UNTESTED})."
        )
    if avg_ranks is not None:
        rows[AVERAGE_RANK] = [
            MISSING if math.isnan(r) else f"{r:.2f}"
            for r in avg_ranks.reindex(table.mean.columns)
        ]
        bold.loc[AVERAGE_RANK] = False
        marks.loc[AVERAGE_RANK] = False
        n_complete = len(table.mean.dropna())
        caption += (
            f" {AVERAGE_RANK}: mean per-dataset rank (1 = best, ties averaged) over the "
            f"{n_complete} datasets with every column present."
        )
    cells = pd.DataFrame.from_dict(rows, orient="index", columns=headers)
    cells.index.name = "dataset"
    bold.index = marks.index = cells.index
    return TextTable(
        title=table.metric, caption=caption, cells=cells, bold=bold, underline=marks
    )


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


def format_wins_table(wins: pd.DataFrame, metric: str, baseline: tuple[str, ...]) -> TextTable:
    """Wins / ties / losses of each column against `baseline` over the datasets."""
    caption = (
        f"Datasets where each column is significantly better (win), not significantly different "
        f"(tie) or significantly worse (loss) than the baseline {column_label(baseline)} "
        f"within the dataset ({CORRECTED_T}; Holm-corrected within the dataset, alpha 0.05), "
        f"or untested ({UNTESTED}); counted over the datasets where both ran (the row's sum), "
        f"{int(wins.sum(axis=1).max()) if len(wins) else 0} at most. Counts of per-dataset "
        "tests, not an across-dataset test."
    )
    cells = _format_numbers(wins, dict.fromkeys(wins.columns, "d"))
    return _plain(f"{metric} wins/ties/losses vs {column_label(baseline)}", caption, cells)


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
    caption = (
        "Friedman test over the N datasets with every column present (the dataset is the "
        "unit: its mean over seeds and splits; scipy, tie-corrected), Iman-Davenport F_F, and "
        "the Nemenyi critical difference CD at alpha 0.05 (Demsar 2006); with fewer than "
        f"{MIN_DATASETS} datasets the test claims nothing: {WITHHELD}, and no CD diagram."
    )
    return _plain("friedman", caption, cells)


def _emphasize(cells: pd.DataFrame, marks: pd.DataFrame, template: str) -> pd.DataFrame:
    """`cells`, those marked in `marks` wrapped in the format string `template`."""
    return cells.where(~marks.astype(bool), cells.map(template.format))


def to_markdown(tables: list[TextTable]) -> str:
    """One `## title` section per table: the caption, then a pipe table (bold as `**...**`)."""
    sections = []
    for table in tables:
        cells = _emphasize(table.cells, table.underlined, "<u>{}</u>")
        cells = _emphasize(cells, table.bold, "**{}**")
        body = tabulate(
            cells,
            headers=[cells.index.name, *cells.columns],
            tablefmt="pipe",
            colalign=["left"] + ["right"] * len(cells.columns),
            disable_numparse=True,
        )
        sections.append(f"## {table.title}\n\n{table.caption}\n\n{body}\n")
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
        cells = _emphasize(table.cells.map(latex_escape), table.underlined, r"\underline{{{}}}")
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
