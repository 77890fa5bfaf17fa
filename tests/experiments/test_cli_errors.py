"""A command line that does not compose exits non-zero with one clear line and writes nothing."""

import pytest


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (
            ["method=random_forest", "dataset=nope"],
            "error: unknown dataset 'nope'; choose one of: breast_cancer, csv, diabetes, digits,",
        ),
        (
            ["method.max_depth=abc"],
            "error: method.max_depth: Value 'abc' of type 'str' could not be converted to Integer",
        ),
        (
            ["-m", "engine=sklearn", "dataset=wine,nope"],
            "error: unknown dataset 'nope'; choose one of: breast_cancer, csv, diabetes, digits,",
        ),
        (
            ["method=gbt", "+method.max_dept=3"],
            "error: unknown key 'method.max_dept'; choose one of: name, n_estimators, learning",
        ),
        (
            ["-m", "method=gbt,random_forest", "+method.max_dept=3"],
            "error: unknown key 'method.max_dept'; choose one of: name, n_estimators, learning",
        ),
        (
            ["method=random_forest", "+method.colour=red"],
            "error: unknown key 'method.colour'; choose one of: name, n_estimators, max_depth,",
        ),
        (
            ["+eval.folds=3"],
            "error: unknown key 'eval.folds'; choose one of: kind, test_size, n_splits,",
        ),
        (
            ["+sede=3"],
            "error: unknown key 'sede'; choose one of: dataset, method, loss, engine, tune,",
        ),
        (
            ["dataset=csv"],
            "error: missing value for dataset.path, dataset.target, dataset.task; set "
            "dataset.path=... dataset.target=... dataset.task=...",
        ),
        (
            ["-m", "dataset=wine,csv", "dataset.task=multiclass"],
            "error: missing value for dataset.path, dataset.target; set",
        ),
    ],
)
def test_bad_command_line_exits_with_one_line_and_no_store(cli, tmp_path, overrides, message):
    result = cli(*overrides)
    assert result.returncode != 0
    assert result.stderr.splitlines() == [result.stderr.strip()]
    assert result.stderr.startswith(message)
    assert not (tmp_path / "mlflow.db").exists()
    assert not (tmp_path / "mlartifacts").exists()
