"""Number formatting, ties, empty cells and LaTeX escaping of the rendered tables."""

import math

import pandas as pd

from reports.render import format_metric_table, latex_escape, row_decimals, to_latex, to_markdown
from reports.tables import approximations, summarize
from reports.verdicts import verdicts


def test_row_decimals_give_three_significant_digits_of_the_largest_mean():
    assert row_decimals(pd.Series([0.3, 0.05])) == 3
    assert row_decimals(pd.Series([0.09, 0.05])) == 4
    assert row_decimals(pd.Series([55.3, 60.1])) == 1
    assert row_decimals(pd.Series([1234.0])) == 0
    assert row_decimals(pd.Series([0.0, 0.0])) == 3


def test_latex_escape():
    assert latex_escape("a_b & 50% #1 {x} ± –") == r"a\_b \& 50\% \#1 \{x\} $\pm$ --"
    assert latex_escape("|d| < 0.01 (> 0)") == (r"\textbar{}d\textbar{} \textless{} 0.01 "
                                                r"(\textgreater{} 0)")


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


def test_a_column_whose_engine_approximates_the_method_is_marked_with_the_reason():
    """Runs tagged `approximation` (experiments.engines.spec.Built) mark their column's header
    with a number the legend explains, in markdown and LaTeX; verdicts.csv keeps the plain label."""
    runs = pd.DataFrame({
        "method": ["gbt", "gbt", "gbt", "random_forest"],
        "engine": ["lightgbm", "lightgbm", "inhouse", "xgboost"],
        "approximation": ["lightgbm grows best-first, not depthwise", None, None,
                          "xgboost's rf mode: bootstrap as subsample"],
    })
    notes = approximations(runs, ["method", "engine"])
    assert notes == {("gbt", "lightgbm"): ["lightgbm grows best-first, not depthwise"],
                     ("random_forest", "xgboost"): ["xgboost's rf mode: bootstrap as subsample"]}
    values = pd.DataFrame(
        [("d", method, engine, "0", 0, value)
         for (method, engine), value in [(("gbt", "inhouse"), 0.1), (("gbt", "lightgbm"), 0.2),
                                         (("random_forest", "xgboost"), 0.3)]],
        columns=["dataset", "method", "engine", "seed", "split", "value"])
    table = summarize(values, "test_error")
    text = format_metric_table(table, verdicts(table), notes=notes)
    assert list(text.cells.columns) == ["gbt / inhouse", "gbt / lightgbm ≈1",
                                        "random_forest / xgboost ≈2"]
    assert ("≈1: lightgbm grows best-first, not depthwise; ≈2: xgboost's rf mode: bootstrap as "
            "subsample") in text.caption
    assert r"gbt / lightgbm $\approx$1" in to_latex([text])
    assert set(verdicts(table)["column"]) == {"gbt / inhouse", "gbt / lightgbm",
                                              "random_forest / xgboost"}
