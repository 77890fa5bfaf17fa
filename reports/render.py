"""Format aggregated tables as text and render them as markdown pipe tables or booktabs LaTeX."""

import math
from dataclasses import dataclass

import pandas as pd
from tabulate import tabulate

from reports.tables import MetricTable

PLUS_MINUS = "±"
MISSING = "–"
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
    cells to set in bold, a title and a caption. Any aggregate can be formatted into one."""

    title: str
    caption: str
    cells: pd.DataFrame
    bold: pd.DataFrame


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


def format_metric_table(table: MetricTable) -> TextTable:
    """Cells `mean ± std` with per-dataset decimals; headers `method / engine`; best in bold."""
    rows = {}
    for dataset, means in table.mean.iterrows():
        decimals = row_decimals(means)
        stds = table.std.loc[dataset]
        rows[dataset] = [format_cell(m, s, decimals) for m, s in zip(means, stds, strict=True)]
    headers = [f"{method} / {engine}" for method, engine in table.mean.columns]
    cells = pd.DataFrame.from_dict(rows, orient="index", columns=headers)
    cells.index.name = "dataset"
    bold = pd.DataFrame(table.best.to_numpy(), index=cells.index, columns=headers)
    caption = (
        f"Mean {PLUS_MINUS} sample std (ddof=1) over all seeds and splits of the ok runs; "
        "lowest per dataset in bold."
    )
    return TextTable(title=table.metric, caption=caption, cells=cells, bold=bold)


def _emphasize(cells: pd.DataFrame, bold: pd.DataFrame, template: str) -> pd.DataFrame:
    """`cells`, those marked in `bold` wrapped in the format string `template`."""
    return cells.where(~bold, cells.map(template.format))


def to_markdown(tables: list[TextTable]) -> str:
    """One `## title` section per table: the caption, then a pipe table (bold as `**...**`)."""
    sections = []
    for table in tables:
        cells = _emphasize(table.cells, table.bold, "**{}**")
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


def to_latex(tables: list[TextTable]) -> str:
    """One complete booktabs `table` environment per table (needs `\\usepackage{booktabs}`)."""
    environments = []
    for table in tables:
        cells = _emphasize(table.cells.map(latex_escape), table.bold, r"\textbf{{{}}}")
        header = " & ".join(latex_escape(label) for label in [cells.index.name, *cells.columns])
        lines = [
            r"\begin{table}[htbp]",
            r"  \centering",
            rf"  \caption{{{latex_escape(f'{table.title}: {table.caption}')}}}",
            rf"  \label{{tab:{table.title.replace('_', '-')}}}",
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
