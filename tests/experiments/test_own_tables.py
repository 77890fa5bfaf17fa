"""A researcher's own files: each is a dataset named by its stem, whose content is part of the
job's identity; the mistakes real tables have are read right with one warning naming the column,
or refused with one line before any run."""

import hashlib
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn import datasets

from experiments.config_errors import exit_if_files_share_a_name, exit_if_invalid
from experiments.data.datasets import load_dataset
from experiments.data.table_files import DataWarning
from experiments.run import run_job
from experiments.store.tracking import run_key
from reports.build import build_report
from reports.runs import load_runs, open_experiment
from reports.tables import ok_runs


def csv_job(compose_job, path, target: str, task: str, *overrides: str):
    return compose_job("dataset=csv", f"dataset.path={path}", f"dataset.target={target}",
                       f"dataset.task={task}", *overrides)  # fmt: skip


def load_warned(dataset) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """load_dataset(dataset) and the DataWarning lines its reading gave."""
    with pytest.warns(DataWarning) as caught:
        X, y = load_dataset(dataset)
    return X, y, [str(warning.message) for warning in caught]


def penguins(n: int = 60) -> pd.DataFrame:
    """A penguins-like table: two species, a bill length that tells them apart, an island."""
    rng = np.random.default_rng(0)
    species = np.where(np.arange(n) % 2 == 0, "Adelie", "Gentoo")
    bill = np.where(species == "Adelie", 38.0, 47.0) + rng.normal(0, 1, n)
    island = rng.choice(["Biscoe", "Dream", "Torgersen"], n)
    return pd.DataFrame({"species": species, "bill_length_mm": bill.round(1), "island": island})


def test_a_file_is_a_dataset_named_by_its_stem_unless_named(compose_job, tmp_path):
    path = tmp_path / "credit.csv"
    penguins().to_csv(path, index=False)
    assert csv_job(compose_job, path, "species", "binary").dataset.name == "credit"
    named = csv_job(compose_job, path, "species", "binary", "dataset.name=scoring")
    assert named.dataset.name == "scoring"
    assert load_dataset(named.dataset)[0].shape == (60, 2)


def test_junk_tokens_in_a_numeric_column_become_missing_with_a_warning(compose_job, tmp_path):
    frame = penguins()
    frame["bill_length_mm"] = frame["bill_length_mm"].astype(object)
    frame.loc[[3, 10, 17], "bill_length_mm"] = "?"
    path = tmp_path / "penguins.csv"
    frame.to_csv(path, index=False)
    cfg = csv_job(compose_job, path, "species", "binary")
    with pytest.warns(DataWarning, match=r"column 'bill_length_mm' is numeric but for 3 cells "
                                         r"of '\?': read as missing"):  # fmt: skip
        X, _ = load_dataset(cfg.dataset)
    assert np.isnan(X[:, 0]).sum() == 3  # one numeric column, not a 50-level category
    np.testing.assert_allclose(np.delete(X[:, 0], [3, 10, 17]),
                               np.delete(penguins()["bill_length_mm"].to_numpy(), [3, 10, 17]))


def test_labels_and_categories_with_stray_spaces_are_stripped(compose_job, tmp_path):
    frame = penguins()
    frame.loc[::7, "species"] = frame.loc[::7, "species"] + " "
    frame.loc[::5, "island"] = " " + frame.loc[::5, "island"]
    path = tmp_path / "penguins.csv"
    frame.to_csv(path, index=False)
    cfg = csv_job(compose_job, path, "species", "binary")  # 2 classes, not 4
    X, y, lines = load_warned(cfg.dataset)
    assert any("column 'species': 9 values had surrounding spaces" in line for line in lines)
    assert any("column 'island': 12 values had surrounding spaces" in line for line in lines)
    assert sorted(np.unique(X[:, 1])) == [0.0, 1.0, 2.0]
    np.testing.assert_array_equal(y, (penguins()["species"] == "Gentoo").astype(int))


def test_a_semicolon_file_with_decimal_commas(compose_job, tmp_path):
    path = tmp_path / "wages.csv"
    path.write_text("hours;wage;sector\n" + "".join(
        f"{i % 12};{10 + i % 7},{i % 10};{'ab'[i % 2]}\n" for i in range(40)))
    cfg = csv_job(compose_job, path, "wage", "regression", "dataset.decimal=comma")
    X, y = load_dataset(cfg.dataset)  # the separator is sniffed
    assert X.shape == (40, 2)
    np.testing.assert_allclose(y[:3], [10.0, 11.1, 12.2])


@pytest.mark.parametrize(
    ("header", "target", "task", "message"),
    [
        ("a,b,a,y", "y", "binary", "has columns of the same name: a; rename them in the file"),
        ("a,b,c,y", "c", "multiclass",
         "the target looks continuous (40 distinct numbers in 40 rows, e.g. "),
        ("a,b,c,y", "b", "multiclass",
         "the target looks like a number to predict, not classes"),
    ],
)
def test_a_table_that_cannot_be_read_as_stated_is_refused_before_any_run(
        compose_job, runs_of, tmp_path, capsys, header, target, task, message):
    path = tmp_path / "houses.csv"
    rows = [f"{i % 3},{1000 + 37 * i},{i + 0.5},{i % 2}" for i in range(40)]
    path.write_text("\n".join([header, *rows]) + "\n")
    cfg = csv_job(compose_job, path, target, task)
    with pytest.raises(SystemExit) as exit_status:
        exit_if_invalid(cfg)
    assert exit_status.value.code == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("error: ") and message in line
    assert runs_of(cfg) == []


def test_a_missing_file_is_refused_before_any_run(compose_job, tmp_path, capsys):
    cfg = csv_job(compose_job, tmp_path / "nowhere.csv", "y", "binary")
    with pytest.raises(SystemExit):
        exit_if_invalid(cfg)
    assert capsys.readouterr().err == f"error: dataset nowhere: no dataset file " \
                                      f"{tmp_path / 'nowhere.csv'}\n"


def test_dates_are_expanded_and_ids_warned_with_how_to_drop_them(compose_job, tmp_path):
    frame = penguins()
    frame["sampled"] = pd.date_range("2007-11-01", periods=60, freq="3D").strftime("%Y-%m-%d")
    frame["sample_id"] = [f"N{i:03d}A1" for i in range(60)]
    path = tmp_path / "penguins.csv"
    frame.to_csv(path, index=False)
    cfg = csv_job(compose_job, path, "species", "binary")
    X, _, lines = load_warned(cfg.dataset)
    assert any("column 'sampled' holds dates: expanded into sampled.year, sampled.month, "
               "sampled.day, sampled.day_of_week" in line for line in lines)
    assert any("column 'sample_id' has 60 distinct values in 60 rows (an ID or free text?)"
               in line and "dataset.drop=[sample_id]" in line for line in lines)
    assert X.shape == (60, 2 + 4 + 1)
    np.testing.assert_array_equal(X[:2, 2:6], [[2007, 11, 1, 3], [2007, 11, 4, 6]])
    dropped = csv_job(compose_job, path, "species", "binary", "dataset.drop=[sample_id,sampled]")
    assert load_dataset(dropped.dataset)[0].shape == (60, 2)
    target = csv_job(compose_job, path, "species", "binary", "dataset.drop=[species]")
    with pytest.raises(ValueError, match="dataset.drop names the target column 'species' of "
                                         "penguins.csv"):  # fmt: skip
        load_dataset(target.dataset)


def test_an_edited_file_is_a_new_job_and_its_hash_is_tagged(compose_job, runs_of, tmp_path):
    path = tmp_path / "penguins.csv"
    penguins().to_csv(path, index=False)
    overrides = ("method.n_estimators=5", "eval.curve_every=0")
    cfg = csv_job(compose_job, path, "species", "binary", *overrides)
    assert run_job(cfg) == "ok"
    assert run_job(cfg) == "resumed"
    [run] = runs_of(cfg)
    assert run.data.tags["data.sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert run.data.tags["dataset"] == "penguins"
    assert (run.data.tags["data.numeric_features"],
            run.data.tags["data.categorical_features"]) == ("1", "1")  # fmt: skip
    key = run_key(cfg)
    penguins(80).to_csv(path, index=False)
    assert run_key(cfg) != key
    assert run_job(cfg) == "ok"  # not resumed: the data changed
    assert len(runs_of(cfg)) == 2


def test_a_reference_without_missing_values_is_a_skipped_job(compose_job, runs_of, tmp_path):
    frame = penguins()
    frame.loc[::9, "bill_length_mm"] = np.nan
    path = tmp_path / "penguins.csv"
    frame.to_csv(path, index=False)
    cfg = csv_job(compose_job, path, "species", "binary", "method=adaboost", "engine=sklearn")
    assert run_job(cfg) == "skipped"
    [run] = runs_of(cfg)
    assert run.data.tags["skip_reason"] == (
        "AdaBoostClassifier does not take missing values (NaN in 5.8% of the cells of X)")


def test_the_report_keeps_only_the_runs_of_the_files_latest_version(
        compose_job, runs_of, store_uri, tmp_path, capsys):
    path = tmp_path / "penguins.csv"
    penguins().to_csv(path, index=False)
    overrides = ("method=gbt", "method.n_estimators=5", "eval.curve_every=0")
    cfg = csv_job(compose_job, path, "species", "binary", *overrides)
    assert run_job(cfg) == "ok"
    penguins(80).to_csv(path, index=False)  # edited: a new version of the same dataset
    assert run_job(cfg) == "ok"
    latest = max(runs_of(cfg), key=lambda run: run.info.start_time)
    build_report(store_uri, cfg.mlflow.experiment_name, tmp_path / "out")
    assert ("report: 1 ok runs in the tables; left out: 1 ok runs of an earlier version of "
            "their dataset's file (data.sha256)") in capsys.readouterr().out
    results = pd.read_csv(tmp_path / "out" / "results.csv")
    assert len(results) == 2  # results.csv lists every run; the tables use the latest file's
    client, experiment_id = open_experiment(store_uri, cfg.mlflow.experiment_name)
    ok = ok_runs(load_runs(client, experiment_id))
    assert ok["run_id"].tolist() == [latest.info.run_id]


def test_two_files_of_one_name_in_a_sweep_are_refused_before_any_run(compose_job, tmp_path,
                                                                        capsys):
    jobs = []
    for year in ("2019", "2020"):
        (tmp_path / year).mkdir()
        penguins().to_csv(tmp_path / year / "penguins.csv", index=False)
        jobs.append(csv_job(compose_job, tmp_path / year / "penguins.csv", "species", "binary"))
    with pytest.raises(SystemExit):
        exit_if_files_share_a_name(jobs)
    assert capsys.readouterr().err == (
        f"error: files {tmp_path}/2019/penguins.csv, {tmp_path}/2020/penguins.csv are all named "
        "dataset penguins: give each a name of its own in a study file (+sweep=study "
        "study=FILE)\n")
    exit_if_files_share_a_name(jobs[:1] * 2)  # one file twice: fine


def test_a_parquet_file_of_category_and_boolean_columns(compose_job, tmp_path):
    frame = penguins()
    frame["island"] = frame["island"].astype("category")
    frame["tagged"] = np.arange(60) % 3 == 0
    path = tmp_path / "penguins.parquet"
    frame.to_parquet(path)
    X, y = load_dataset(csv_job(compose_job, path, "species", "binary").dataset)
    assert X.shape == (60, 3) and sorted(np.unique(X[:, 1])) == [0.0, 1.0, 2.0]


def test_decimal_commas_under_a_decimal_point_are_refused_naming_the_column(compose_job,
                                                                           tmp_path):
    path = tmp_path / "wages.csv"
    path.write_text("hours;wage\n" + "".join(f"{i % 12};{10 + i % 7},{i % 10}\n"
                                             for i in range(40)))
    with pytest.raises(ValueError, match=r"wages.csv: column 'wage' holds numbers with a decimal "
                                         r"comma \(e.g. '10,0'\): set dataset.decimal=comma"):
        load_dataset(csv_job(compose_job, path, "hours", "regression").dataset)


def test_a_numeric_column_with_many_missing_markers_stays_numeric(compose_job, tmp_path):
    frame = penguins()
    frame["bill_length_mm"] = frame["bill_length_mm"].astype(object)
    frame.loc[::4, "bill_length_mm"] = "?"  # a quarter of the cells
    path = tmp_path / "penguins.csv"
    frame.to_csv(path, index=False)
    with pytest.warns(DataWarning, match="is numeric but for 15 cells of '\\?'"):
        X, _ = load_dataset(csv_job(compose_job, path, "species", "binary").dataset)
    assert np.isnan(X[:, 0]).sum() == 15


def test_day_first_dates_are_read_day_first_in_every_row(compose_job, tmp_path):
    frame = penguins()
    dates = pd.date_range("2007-11-01", periods=60, freq="D")
    frame["sampled"] = dates.strftime("%d/%m/%Y")  # 01/11/2007 ... 30/12/2007
    path = tmp_path / "penguins.csv"
    frame.to_csv(path, index=False)
    with pytest.warns(DataWarning, match="column 'sampled' holds dates"):
        X, _ = load_dataset(csv_job(compose_job, path, "species", "binary").dataset)
    np.testing.assert_array_equal(X[:, 2:5], np.column_stack([dates.year, dates.month, dates.day]))


def test_one_file_with_two_targets_is_two_datasets_in_the_report(compose_job, store_uri,
                                                                 tmp_path):
    frame = penguins()
    frame["sex"] = np.where(np.arange(60) % 3 == 0, "female", "male")
    path = tmp_path / "penguins.csv"
    frame.to_csv(path, index=False)
    overrides = ("method=gbt", "method.n_estimators=5", "eval.curve_every=0")
    for target in ("species", "sex"):
        assert run_job(csv_job(compose_job, path, target, "binary", *overrides)) == "ok"
    cfg = csv_job(compose_job, path, "sex", "binary", *overrides)
    client, experiment_id = open_experiment(store_uri, cfg.mlflow.experiment_name)
    assert sorted(ok_runs(load_runs(client, experiment_id))["dataset"]) == [
        "penguins [sex]", "penguins [species]"]


def test_two_files_of_one_name_from_two_sweeps_are_two_rows(compose_job, store_uri, tmp_path):
    overrides = ("method=gbt", "method.n_estimators=5", "eval.curve_every=0")
    for site, n in (("a", 60), ("b", 80)):
        (tmp_path / site).mkdir()
        penguins(n).to_csv(tmp_path / site / "data.csv", index=False)
        job = csv_job(compose_job, tmp_path / site / "data.csv", "species", "binary", *overrides)
        assert run_job(job) == "ok"
    client, experiment_id = open_experiment(store_uri, job.mlflow.experiment_name)
    ok = ok_runs(load_runs(client, experiment_id))
    assert sorted(ok["dataset"]) == ["data [a/data.csv]", "data [b/data.csv]"]


def test_a_class_of_a_single_row_is_refused_before_any_run_naming_it(compose_job, tmp_path,
                                                                       capsys):
    frame = penguins()
    frame.loc[7, "species"] = "_"  # a stray label, as OpenML's penguins has in `sex`
    path = tmp_path / "penguins.csv"
    frame.to_csv(path, index=False)
    with pytest.raises(SystemExit):
        exit_if_invalid(csv_job(compose_job, path, "species", "binary"))
    assert "dataset penguins has 3 classes ('Adelie' 30, 'Gentoo' 29, '_' 1)" in (
        capsys.readouterr().err)
    with pytest.raises(SystemExit):
        exit_if_invalid(csv_job(compose_job, path, "species", "multiclass"))
    assert capsys.readouterr().err == (
        "error: dataset penguins: the classes '_' have a single row, too few for a stratified "
        "split: fix or drop those rows in the file\n")


def test_numbers_in_disguise_random_ids_and_windows_files_are_warned(compose_job, tmp_path):
    frame = penguins()
    frame["customer_id"] = np.random.default_rng(1).permutation(60) + 100_000
    frame["fee"] = [f"${1000 + 37 * i:,}" for i in range(60)]  # $1,000 ... $3,183
    frame["island"] = frame["island"].str.replace("Dream", "Drëam")
    path = tmp_path / "penguins.csv"
    frame.to_csv(path, index=False, encoding="cp1252")
    X, _, lines = load_warned(csv_job(compose_job, path, "species", "binary").dataset)
    assert any("penguins.csv is not UTF-8" in line and "read as cp1252" in line for line in lines)
    assert any("column 'customer_id' has 60 distinct values in 60 rows" in line for line in lines)
    assert any("column 'fee' looks numeric (e.g. '$1,000') but is read as 60 categories" in line
               for line in lines)
    assert X.shape == (60, 4)


def test_histgradientboosting_is_skipped_past_its_255_categories_naming_the_column(
        compose_job, runs_of, tmp_path):
    frame = penguins(600)
    frame["code"] = [f"C{i % 300:03d}" for i in range(600)]
    path = tmp_path / "penguins.csv"
    frame.to_csv(path, index=False)
    overrides = ("dataset.categorical=native", "method=gbt", "method.n_estimators=5",
                 "eval.curve_every=0")
    skipped = csv_job(compose_job, path, "species", "binary", "engine=sklearn", *overrides)
    assert run_job(skipped) == "skipped"
    [run] = runs_of(skipped)
    assert run.data.tags["skip_reason"] == (
        "HistGradientBoostingClassifier splits at most 255 categories; column 'code' has 300 "
        "(dataset.categorical=ordinal runs it)")
    assert run_job(csv_job(compose_job, path, "species", "binary", *overrides)) == "ok"


def test_only_missing_markers_become_missing_other_tokens_keep_a_column_categorical(
        compose_job, tmp_path):
    frame = penguins()
    frame["grade"] = np.array(["1", "2", "3", "A", "B"])[np.arange(60) % 5]
    frame["fare"] = np.where(np.arange(60) % 6 == 0, "-", (np.arange(60) * 1.5).astype(str))
    frame["label"] = np.where(np.arange(60) % 2 == 0, "1", "?")  # a target is never 'missing'
    path = tmp_path / "penguins.csv"
    frame.drop(columns="species").to_csv(path, index=False)
    cfg = csv_job(compose_job, path, "label", "binary")
    X, y, lines = load_warned(cfg.dataset)
    assert any("column 'grade' holds numbers in 60% of its cells and 2 other values ('A', 'B')"
               ": read as categories" in line for line in lines)
    assert any("column 'fare' is numeric but for 10 cells of '-'" in line for line in lines)
    assert sorted(np.unique(X[:, 2])) == [0, 1, 2, 3, 4]  # grade: 5 categories, none lost
    assert np.isnan(X[:, 3]).sum() == 10 and np.bincount(y).tolist() == [30, 30]


def test_thousands_commas_are_not_decimal_commas_and_points_survive_a_decimal_comma(
        compose_job, tmp_path):
    frame = penguins()
    frame["income"] = [f"{v:,}" for v in 1000 + 97 * np.arange(60)]  # "1,000" ... "6,723"
    path = tmp_path / "penguins.csv"
    frame.to_csv(path, index=False)
    with pytest.warns(DataWarning, match="column 'income': comma read as a thousands separator"):
        X, _ = load_dataset(csv_job(compose_job, path, "species", "binary").dataset)
    np.testing.assert_array_equal(X[:, 2], 1000 + 97 * np.arange(60))  # bill's 38.5: a point
    comma = csv_job(compose_job, path, "species", "binary", "dataset.decimal=comma",
                    "dataset.drop=[income]")
    X_comma, _ = load_dataset(comma.dataset)  # 38.5 stays 38.5, not 385
    np.testing.assert_array_equal(X_comma[:, 0], penguins()["bill_length_mm"])


def test_infinite_values_dates_and_durations_of_a_parquet_file(compose_job, tmp_path):
    frame = penguins()
    frame["ratio"] = np.where(np.arange(60) % 10 == 0, np.inf, 1.0)
    frame["when"] = pd.date_range("2007-11-01", periods=60, freq="h")
    frame["dur"] = pd.to_timedelta(np.arange(60), unit="s")
    path = tmp_path / "penguins.parquet"
    frame.to_parquet(path)
    X, _, lines = load_warned(csv_job(compose_job, path, "species", "binary").dataset)
    assert any("column 'ratio' has 6 infinite values: read as missing" in line for line in lines)
    assert any("column 'when' holds dates: expanded into when.year" in line for line in lines)
    assert X.shape == (60, 2 + 1 + 4 + 1) and np.isnan(X[:, 2]).sum() == 6
    np.testing.assert_array_equal(X[:, -1], np.arange(60))  # the durations, in seconds


def test_two_readings_of_one_file_are_two_rows_of_the_report(compose_job, store_uri, tmp_path):
    frame = penguins()
    frame["sample_id"] = [f"N{i:03d}" for i in range(60)]
    path = tmp_path / "penguins.csv"
    frame.to_csv(path, index=False, sep="\t")
    overrides = ("method=gbt", "method.n_estimators=5", "eval.curve_every=0", "dataset.sep=tab")
    for drop in ("[]", "[sample_id]"):
        job = csv_job(compose_job, path, "species", "binary", f"dataset.drop={drop}", *overrides)
        assert run_job(job) == "ok"
    client, experiment_id = open_experiment(store_uri, job.mlflow.experiment_name)
    assert sorted(ok_runs(load_runs(client, experiment_id))["dataset"]) == [
        "penguins [drop=sample_id; sep=tab]", "penguins [sep=tab]"]


def cars93(n: int = 93) -> pd.DataFrame:
    """A Cars93-like table (MASS): AirBags "None", "Driver only", "Driver & Passenger"; prices
    with a decimal point; an origin to predict."""
    rng = np.random.default_rng(93)
    airbags = np.array(["None", "Driver only", "Driver & Passenger"])[np.arange(n) % 3]
    return pd.DataFrame({"Price": rng.uniform(7, 62, n).round(1), "AirBags": airbags,
                         "Horsepower": rng.integers(55, 300, n),
                         "Origin": np.array(["USA", "non-USA"])[np.arange(n) % 2]})


def test_the_class_and_level_none_of_cars93_airbags_is_not_missing(compose_job, runs_of,
                                                                     tmp_path):
    path = tmp_path / "Cars93.csv"
    cars93().to_csv(path, index=False)
    overrides = ("method=gbt", "method.n_estimators=5", "eval.curve_every=0")
    target = csv_job(compose_job, path, "AirBags", "multiclass", *overrides)
    _, y = load_dataset(target.dataset)
    assert np.bincount(y).tolist() == [31, 31, 31]  # 'Driver & Passenger', 'Driver only', 'None'
    assert run_job(target) == "ok"
    [run] = runs_of(target)
    assert run.data.tags["data.classes"] == "3"
    feature = csv_job(compose_job, path, "Origin", "binary")
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataWarning)  # None among capitalised levels: no doubt
        X, _ = load_dataset(feature.dataset)
    assert not np.isnan(X).any() and sorted(np.unique(X[:, 1])) == [0.0, 1.0, 2.0]


def test_na_is_a_level_of_text_columns_and_missing_in_numeric_ones(compose_job, tmp_path):
    frame = penguins()
    bill = frame["bill_length_mm"].astype(object)
    bill[::10] = "NA"  # R's missing number
    frame["bill_length_mm"] = bill
    frame["region"] = np.array(["NA", "EU", "AS"])[np.arange(60) % 3]  # NA: North America
    frame["sex"] = np.where(np.arange(60) % 5 == 0, "NA", np.where(np.arange(60) % 2, "male",
                                                                   "female"))
    path = tmp_path / "penguins.csv"
    frame.to_csv(path, index=False)
    X, _, lines = load_warned(csv_job(compose_job, path, "species", "binary").dataset)
    assert np.isnan(X[:, 0]).sum() == 6 and not np.isnan(X[:, 1:]).any()
    assert sorted(np.unique(X[:, 2])) == [0.0, 1.0, 2.0]  # region: AS, EU, NA
    assert [line for line in lines if "'region'" in line] == []
    [sex] = [line for line in lines if "'sex'" in line]
    assert "'NA' (12 rows)" in sex and "dataset.na_values=[NA]" in sex
    stated = csv_job(compose_job, path, "species", "binary", "dataset.na_values=[NA]")
    X, _ = load_dataset(stated.dataset)
    assert np.isnan(X[:, 2]).sum() == 20 and np.isnan(X[:, 3]).sum() == 12
    target = csv_job(compose_job, path, "sex", "multiclass")
    _, y, lines = load_warned(target.dataset)
    assert np.bincount(y).tolist() == [12, 24, 24]  # NA: a class, female, male
    assert any("column 'sex'" in line and "'NA'" in line for line in lines)
    with pytest.raises(ValueError, match=r"has 3 classes \('female' 24, 'male' 24, 'NA' 12\): if "
                                         r"'NA' marks missing values, dataset.na_values=\[NA\]"):
        load_dataset(csv_job(compose_job, path, "sex", "binary").dataset)


def test_stated_missing_markers_are_missing(compose_job, tmp_path):
    frame = penguins()
    frame.loc[::6, "bill_length_mm"] = -999  # written -999.0
    frame["visits"] = np.where(np.arange(60) % 5 == 0, -999, np.arange(60) % 7)  # whole numbers
    path = tmp_path / "penguins.csv"
    frame.to_csv(path, index=False)
    X, _ = load_dataset(csv_job(compose_job, path, "species", "binary",
                                "dataset.na_values=[-999]").dataset)
    assert np.isnan(X[:, 0]).sum() == 10 and np.isnan(X[:, 2]).sum() == 12


WEIGHTS = 450 + 106 * (np.arange(60) // 2)  # 450 ... 3524: below and above a thousand
GROUPED = {  # dataset overrides, the CSV separator, a weight as the file writes it
    "us": ((), ",", lambda v: f"{v:,}"),  # 2,760
    "european": (("dataset.decimal=comma",), ";", lambda v: f"{v:,}".replace(",", ".")),
    "space": ((), ",", lambda v: f"{v:,}".replace(",", " ")),  # 2 760
    "nbsp": ((), ",", lambda v: f"{v:,}".replace(",", "\u00a0")),
    "thin": ((), ",", lambda v: f"{v:,}".replace(",", "\u202f")),
    "swiss": ((), ",", lambda v: f"{v:,}".replace(",", "'")),  # 2'760
}


@pytest.mark.parametrize("style", GROUPED)
def test_thousands_separators_are_read_as_numbers_with_one_warning(compose_job, runs_of,
                                                                    tmp_path, style):
    overrides, sep, written = GROUPED[style]
    heavy = np.where(WEIGHTS > 2000, "heavy", "light")
    path = tmp_path / "parcels.csv"
    pd.DataFrame({"weight": [written(v) for v in WEIGHTS], "class": heavy}).to_csv(
        path, sep=sep, index=False)
    cfg = csv_job(compose_job, path, "class", "binary", *overrides, "method=gbt",
                  "method.n_estimators=1", "method.max_depth=1", "eval.curve_every=0")
    X, _, lines = load_warned(cfg.dataset)
    np.testing.assert_array_equal(X[:, 0], WEIGHTS)
    [line] = [line for line in lines if "'weight'" in line]
    assert "thousands" in line and repr(written(1086)) in line
    assert run_job(cfg) == "ok"  # one stump: an error of 0 only if every weight is in order
    [run] = runs_of(cfg)
    assert run.data.metrics["test_error"] == 0.0
    assert run.data.tags["data.numeric_features"] == "1"


def test_european_thousands_with_a_decimal_comma(compose_job, tmp_path):
    prices = 950.5 + 1234.25 * np.arange(40)  # 950,5  2.184,75 ... 49.085,75
    rows = [f"{v:,.2f}".replace(",", "_").replace(".", ",").replace("_", ".") + f";{i % 2}\n"
            for i, v in enumerate(prices)]
    path = tmp_path / "prices.csv"
    path.write_text("price;cheap\n" + "".join(rows))
    X, y, lines = load_warned(csv_job(compose_job, path, "price", "regression",
                                      "dataset.decimal=comma").dataset)
    np.testing.assert_allclose(y, prices)
    assert any("'price'" in line and "'2.184,75'" in line for line in lines)
    with pytest.raises(ValueError, match="column 'price' .*set dataset.decimal=comma"):
        load_dataset(csv_job(compose_job, path, "cheap", "binary").dataset)


INCOMES = 1000 + 97 * np.arange(60)  # 1,000 ... 6,723: every value grouped once
AMBIGUOUS = {  # a column that two readings fit: each setting that decides, and what it reads
    "point": ("weight", WEIGHTS, lambda v: f"{v:,}".replace(",", "."),  # 450 beside 1.086
              {"dataset.decimal=comma": WEIGHTS,
               "dataset.thousands=none": np.where(WEIGHTS < 1000, WEIGHTS, WEIGHTS / 1000)}),
    "comma": ("income", INCOMES, lambda v: f"{v:,}",
              {"dataset.thousands=comma": INCOMES, "dataset.decimal=comma": INCOMES / 1000}),
}


@pytest.mark.parametrize("mark", AMBIGUOUS)
def test_a_column_that_two_readings_fit_is_refused_until_a_setting_decides(
        compose_job, tmp_path, capsys, mark):
    column, values, written, readings = AMBIGUOUS[mark]
    path = tmp_path / "parcels.csv"  # whole numbers only: no cell shows the file's decimal mark
    pd.DataFrame({column: [written(v) for v in values],
                  "class": np.arange(len(values)) % 2}).to_csv(path, index=False)
    with pytest.raises(SystemExit):
        exit_if_invalid(csv_job(compose_job, path, "class", "binary"))
    [line] = capsys.readouterr().err.splitlines()
    first = next(written(v) for v in values if v >= 1000)
    assert f"column '{column}' has {first!r}" in line
    assert all(setting in line for setting in readings)
    for setting, read in readings.items():
        X, _ = load_dataset(csv_job(compose_job, path, "class", "binary", setting).dataset)
        np.testing.assert_allclose(X[:, 0], read)


def test_a_stated_thousands_separator_that_does_not_fit_names_the_column(compose_job, tmp_path):
    path = tmp_path / "wages.csv"
    path.write_text("hours;wage\n" + "".join(f"{i % 12};{10 + i % 7},{i % 10}\n"
                                             for i in range(40)))
    with pytest.raises(ValueError, match=r"column 'wage' .*'10,0'.*dataset.thousands=comma"):
        load_dataset(csv_job(compose_job, path, "hours", "regression",
                             "dataset.thousands=comma").dataset)
    with pytest.raises(ValueError, match="dataset.thousands and dataset.decimal are both comma"):
        load_dataset(csv_job(compose_job, path, "hours", "regression", "dataset.thousands=comma",
                             "dataset.decimal=comma").dataset)
    with pytest.raises(Exception) as invalid:
        csv_job(compose_job, path, "hours", "regression", "dataset.thousands=dot")
    assert "expected one of [comma, point, space, apostrophe, none]" in str(invalid.value.__cause__)


def test_refusals_advise_the_setting_that_fixes_the_cause(compose_job, tmp_path, capsys):
    wages = tmp_path / "wages.csv"  # a decimal-comma target, dataset.decimal unset
    wages.write_text("hours;wage\n" + "".join(f"{i % 12};{5 + i // 10},{i % 10}\n"
                                              for i in range(300)))
    with pytest.raises(SystemExit):
        exit_if_invalid(csv_job(compose_job, wages, "wage", "regression"))
    [line] = capsys.readouterr().err.splitlines()
    assert "dataset.decimal=comma" in line and "multiclass" not in line
    diabetes = tmp_path / "diabetes.csv"  # a count (25-346) declared multiclass
    X, y = datasets.load_diabetes(return_X_y=True)
    frame = pd.DataFrame(X[:, :3].round(4), columns=["age", "sex", "bmi"])
    frame["progression"] = y.astype(int)
    frame.to_csv(diabetes, index=False)
    with pytest.raises(SystemExit):
        exit_if_invalid(csv_job(compose_job, diabetes, "progression", "multiclass"))
    [line] = capsys.readouterr().err.splitlines()
    assert "looks like a number to predict" in line and "dataset.task=regression" in line
