"""Number formatting, ties, empty cells and LaTeX escaping of the rendered tables."""

import math

import pandas as pd

from reports.render import format_metric_table, latex_escape, row_decimals, to_latex, to_markdown
from reports.tables import summarize
from reports.verdicts import verdicts


def test_row_decimals_give_three_significant_digits_of_the_largest_mean():
    assert row_decimals(pd.Series([0.3, 0.05])) == 3
    assert row_decimals(pd.Series([0.09, 0.05])) == 4
    assert row_decimals(pd.Series([55.3, 60.1])) == 1
    assert row_decimals(pd.Series([1234.0])) == 0
    assert row_decimals(pd.Series([0.0, 0.0])) == 3


def test_latex_escape():
    assert latex_escape("a_b & 50% #1 {x} ± –") == r"a\_b \& 50\% \#1 \{x\} $\pm$ --"


def test_ties_single_values_and_missing_cells():
    values = pd.DataFrame(
        [
            ("iris", "bagging", "inhouse", "0", 0, 0.0),
            ("iris", "bagging", "inhouse", "1", 0, 0.0),
            ("iris", "gbt", "inhouse", "0", 0, 0.0),
            ("iris", "gbt", "inhouse", "1", 0, 0.0),
            ("wine", "gbt", "inhouse", "0", 0, 0.25),
        ],
        columns=["dataset", "method", "engine", "seed", "split", "value"],
    )
    table = summarize(values, "test_error")
    assert math.isnan(table.mean.loc["wine", ("bagging", "inhouse")])
    assert table.count.loc["wine"].tolist() == [0, 1]
    text = format_metric_table(table, verdicts(table))
    assert text.cells.loc["wine"].tolist() == ["–", "0.250"]  # one value: no std
    lines = [line for line in to_markdown([text]).splitlines() if line.startswith("|")]
    rows = [line.strip("|").split("|") for line in lines[-2:]]
    assert [[cell.strip() for cell in row] for row in rows] == [
        ["iris", "**0.000 ± 0.000**", "**0.000 ± 0.000**"],  # a tie: both bold
        ["wine", "–", "**0.250**"],
    ]
    assert r"wine & -- & \textbf{0.250} \\" in to_latex([text])
