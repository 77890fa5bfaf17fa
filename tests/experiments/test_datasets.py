"""Datasets by name: generated data follows data_seed only, labels are 0..K-1, loads are cached;
tables keep NaN and encode categories; every error names the bad thing in one line."""

import os
from urllib.error import URLError

import numpy as np
import pandas as pd
import pytest
import sklearn.datasets._openml as sklearn_openml
from scipy.special import erf
from sklearn.datasets import (
    make_classification,
    make_friedman1,
    make_hastie_10_2,
    make_regression,
)

import experiments.data.datasets
from experiments.configs import Task, group_options
from experiments.data.datasets import load_dataset, load_openml
from experiments.data.suite_cache import OPENML_HOME_ENV
from experiments.run import run_job

CHI2_10_MEDIAN = 9.34181776559197  # median of chi-square, 10 degrees of freedom (ESL eq. 10.2)

# option -> (extra overrides, task, shape of X); csv and openml read the table of `mixed_frame`
EXPECTED = {
    "breast_cancer": ([], Task.binary, (569, 30)),
    "wine": ([], Task.multiclass, (178, 13)),
    "iris": ([], Task.multiclass, (150, 4)),
    "digits": ([], Task.multiclass, (1797, 64)),
    "diabetes": ([], Task.regression, (442, 10)),
    "hastie_10_2": ([], Task.binary, (12000, 10)),
    "friedman1": ([], Task.regression, (2000, 10)),
    "friedman2": ([], Task.regression, (2000, 4)),
    "friedman3": ([], Task.regression, (2000, 4)),
    "nested_spheres": ([], Task.binary, (10000, 10)),
    "synthetic_classification": ([], Task.binary, (10000, 20)),
    "synthetic_regression": ([], Task.regression, (10000, 20)),
    "csv": (["dataset.target=label", "dataset.task=multiclass"], Task.multiclass, (4, 4)),
    "openml": (["dataset.data_id=61", "dataset.task=multiclass"], Task.multiclass, (4, 4)),
}


def mixed_frame() -> pd.DataFrame:
    """Numeric, text, categorical and boolean features with gaps, and a text label."""
    return pd.DataFrame(
        {
            "size": [1.5, np.nan, 3.0, 4.0],
            "color": ["red", "blue", None, "red"],
            "grade": pd.Categorical(["lo", None, "hi", "lo"]),
            "flag": [True, False, True, True],
            "label": ["b", "a", "c", "a"],
        }
    )


# the same table encoded by hand: categories sorted (blue=0, red=1; hi=0, lo=1), NaN kept
MIXED_X = np.array(
    [[1.5, 1, 1, 1], [np.nan, 0, np.nan, 0], [3.0, np.nan, 0, 1], [4.0, 1, 1, 1]], dtype=float
)
MIXED_Y = np.array([1, 0, 2, 0])


@pytest.fixture
def table(tmp_path):
    """table(suffix) -> path of mixed_frame() written as a .csv or .parquet file."""

    def table(suffix: str = ".csv"):
        path = tmp_path / f"mixed{suffix}"
        frame = mixed_frame()
        frame.to_parquet(path) if suffix == ".parquet" else frame.to_csv(path, index=False)
        return path

    return table


@pytest.fixture
def fake_openml(monkeypatch):
    """experiments.data.openml's fetch_frame replaced by one that serves mixed_frame() (default
    target `label`) and records the calls."""
    calls = []

    def fetch_frame(data_id, data_home):
        calls.append({"data_id": data_id, "data_home": data_home})
        return mixed_frame(), {"default_target_attribute": "label"}

    monkeypatch.setattr(experiments.data.datasets, "fetch_frame", fetch_frame)
    return calls


LOADED_ELSEWHERE = {"suite", "study"}  # test_suites.py, test_studies.py


def test_every_dataset_option_is_checked_here():
    assert sorted(EXPECTED) == sorted(set(group_options("dataset")) - LOADED_ELSEWHERE)


@pytest.mark.parametrize("option", sorted(EXPECTED))
def test_every_dataset_loads_with_its_task_and_shape(
    compose_job, table, fake_openml, tmp_path, option
):
    overrides, task, shape = EXPECTED[option]
    if option == "csv":
        overrides = [*overrides, f"dataset.path={table()}"]
    if option == "openml":
        overrides = [*overrides, f"dataset.data_home={tmp_path}"]
    cfg = compose_job(f"dataset={option}", *overrides)
    X, y = load_dataset(cfg.dataset)
    assert cfg.dataset.task is task
    assert X.shape == shape and X.dtype == np.float64 and y.shape == shape[:1]
    if task is Task.regression:
        assert y.dtype == np.float64
    else:
        n_classes = len(np.unique(y))
        np.testing.assert_array_equal(np.unique(y), np.arange(n_classes))
        assert (n_classes == 2) == (task is Task.binary)


def test_generated_data_follows_data_seed_not_the_job_seed(compose_job):
    X, y = load_dataset(compose_job("dataset=friedman1", "seed=0").dataset)
    X_other_seed, _ = load_dataset(compose_job("dataset=friedman1", "seed=1").dataset)
    assert X_other_seed is X  # one load per process and config
    X_expected, y_expected = make_friedman1(
        n_samples=2000, n_features=10, noise=1.0, random_state=0
    )
    np.testing.assert_array_equal(X, X_expected)
    np.testing.assert_array_equal(y, y_expected)
    X_new, _ = load_dataset(compose_job("dataset=friedman1", "dataset.data_seed=1").dataset)
    assert not np.array_equal(X_new, X)


def test_class_labels_are_encoded_from_zero(compose_job):
    X, y = load_dataset(compose_job("dataset=hastie_10_2", "dataset.n_samples=300").dataset)
    _, y_book = make_hastie_10_2(n_samples=300, random_state=0)
    np.testing.assert_array_equal(y, (y_book == 1).astype(int))
    assert X.shape == (300, 10)


def test_friedman2_and_3_follow_friedman_1991_without_noise(compose_job):
    """Friedman (1991): x1 in [0, 100], x2 in [40 pi, 560 pi], x3 in [0, 1], x4 in [1, 11]."""
    X, y2 = load_dataset(compose_job("dataset=friedman2", "dataset.noise=0").dataset)
    x1, x2, x3, x4 = X.T
    np.testing.assert_allclose(y2, np.sqrt(x1**2 + (x2 * x3 - 1 / (x2 * x4)) ** 2))
    low, high = np.array([0, 40 * np.pi, 0, 1]), np.array([100, 560 * np.pi, 1, 11])
    np.testing.assert_allclose((X.min(axis=0) - low) / (high - low), 0, atol=0.01)
    np.testing.assert_allclose((X.max(axis=0) - low) / (high - low), 1, atol=0.01)
    X, y3 = load_dataset(compose_job("dataset=friedman3", "dataset.noise=0").dataset)
    x1, x2, x3, x4 = X.T
    np.testing.assert_allclose(y3, np.arctan((x2 * x3 - 1 / (x2 * x4)) / x1))


def test_nested_spheres_two_classes_split_at_the_chi2_10_median(compose_job):
    X, y = load_dataset(compose_job("dataset=nested_spheres").dataset)
    np.testing.assert_array_equal(y, (X**2).sum(axis=1) >= CHI2_10_MEDIAN)
    assert y.mean() == pytest.approx(0.5, abs=0.02)


def test_nested_spheres_k_classes_are_balanced_shells(compose_job):
    cfg = compose_job(
        "dataset=nested_spheres",
        "dataset.n_classes=4",
        "dataset.n_features=3",
        "dataset.n_samples=100000",
        "dataset.task=multiclass",
    )
    X, y = load_dataset(cfg.dataset)
    # chi2_3 cdf in closed form: F(r) = erf(sqrt(r/2)) - sqrt(2r/pi) exp(-r/2); class floor(K F)
    r = (X**2).sum(axis=1)
    cdf = erf(np.sqrt(r / 2)) - np.sqrt(2 * r / np.pi) * np.exp(-r / 2)
    np.testing.assert_array_equal(y, np.floor(4 * cdf))
    np.testing.assert_allclose(np.bincount(y) / len(y), 0.25, atol=0.02 * 0.25)


def test_synthetic_data_is_scikit_learns_generators(compose_job):
    overrides = ["dataset.n_classes=3", "dataset.task=multiclass", "dataset.data_seed=7"]
    X, y = load_dataset(compose_job("dataset=synthetic_classification", *overrides).dataset)
    X_expected, y_expected = make_classification(
        n_samples=10000,
        n_features=20,
        n_informative=10,
        n_redundant=0,
        n_classes=3,
        flip_y=0.01,
        class_sep=1.0,
        random_state=7,
    )
    np.testing.assert_array_equal(X, X_expected)
    np.testing.assert_array_equal(y, y_expected)
    X, y = load_dataset(compose_job("dataset=synthetic_regression").dataset)
    X_expected, y_expected = make_regression(
        n_samples=10000, n_features=20, n_informative=10, noise=1.0, random_state=0
    )
    np.testing.assert_array_equal(X, X_expected)
    np.testing.assert_array_equal(y, y_expected)


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_table_keeps_nan_and_encodes_categories(compose_job, table, suffix):
    overrides = ["dataset.target=label", "dataset.task=multiclass"]
    cfg = compose_job("dataset=csv", f"dataset.path={table(suffix)}", *overrides)
    X, y = load_dataset(cfg.dataset)
    np.testing.assert_array_equal(X, MIXED_X)
    np.testing.assert_array_equal(y, MIXED_Y)


def test_an_edited_table_is_read_again(compose_job, tmp_path):
    path = tmp_path / "edited.csv"
    overrides = [
        "dataset=csv",
        f"dataset.path={path}",
        "dataset.target=y",
        "dataset.task=regression",
    ]
    pd.DataFrame({"x": [1.0, 2.0], "y": [0.5, 1.5]}).to_csv(path, index=False)
    X, y = load_dataset(compose_job(*overrides).dataset)
    assert load_dataset(compose_job(*overrides).dataset)[0] is X
    pd.DataFrame({"x": [3.0, 4.0, 5.0], "y": [0.0, 1.0, 2.0]}).to_csv(path, index=False)
    os.utime(path, ns=(0, path.stat().st_mtime_ns + 10**9))
    X_new, y_new = load_dataset(compose_job(*overrides).dataset)
    np.testing.assert_array_equal(X_new, [[3.0], [4.0], [5.0]])
    np.testing.assert_array_equal(y_new, [0.0, 1.0, 2.0])


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (
            ["dataset.target=nope", "dataset.task=binary"],
            "no target column 'nope' in dataset mixed ({path}); columns: size, color, grade, "
            "flag, label",
        ),
        (
            ["dataset.target=size", "dataset.task=regression"],
            "target column 'size' of dataset mixed ({path}) is empty in 1 of 4 rows: fill or drop "
            "those rows in the file",
        ),
        (
            ["dataset.target=label", "dataset.task=binary"],
            "dataset mixed has 3 classes ('a' 2, 'b' 1, 'c' 1): set dataset.task=multiclass, "
            "not binary",
        ),
        (
            ["dataset.target=label", "dataset.task=regression"],
            "dataset mixed: a regression target must be numeric, not object (it looks like 3 "
            "classes: 'b', 'a', 'c', ...): set dataset.task=multiclass",
        ),
        (
            ["dataset.target=flag", "dataset.path=/nowhere/table.csv", "dataset.task=binary"],
            "no dataset file /nowhere/table.csv",
        ),
    ],
)
def test_a_bad_table_is_refused_with_one_line(compose_job, table, overrides, message):
    path = table()
    cfg = compose_job("dataset=csv", f"dataset.path={path}", *overrides)
    with pytest.raises((ValueError, OSError)) as error:
        load_dataset(cfg.dataset)
    assert str(error.value) == message.format(path=path)


def test_n_classes_must_agree_with_the_task(compose_job):
    cfg = compose_job("dataset=nested_spheres", "dataset.n_classes=3", "dataset.n_samples=300")
    message = r"^dataset nested_spheres has 3 classes \(1 103, 0 100, 2 97\): set dataset.task"
    with pytest.raises(ValueError, match=message):
        load_dataset(cfg.dataset)


def test_a_missing_target_column_fails_the_job_with_that_line(compose_job, runs_of, table):
    path = table()
    overrides = [f"dataset.path={path}", "dataset.target=nope", "dataset.task=binary"]
    cfg = compose_job("dataset=csv", *overrides)
    assert run_job(cfg) == "failed"
    [run] = runs_of(cfg)
    message = (f"no target column 'nope' in dataset mixed ({path}); columns: size, color, "
               "grade, flag, label")
    assert run.data.tags["error"] == f"ValueError: {message}"


@pytest.mark.slow  # a fresh process and MLflow store: 10 to 20 seconds
def test_the_command_line_refuses_a_missing_target_column_before_any_run(cli, cli_runs, table):
    path = table()
    result = cli(
        "dataset=csv", f"dataset.path={path}", "dataset.target=nope", "dataset.task=binary"
    )
    message = (f"no target column 'nope' in dataset mixed ({path}); columns: size, color, "
               "grade, flag, label")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1] == f"error: {message}"
    assert cli_runs("default") == []


def test_openml_reads_the_cache_with_the_default_or_given_target(fake_openml, tmp_path):
    X, y, *_ = load_openml("iris", data_id=61, target=None, data_home=str(tmp_path))
    np.testing.assert_array_equal(X, MIXED_X)
    np.testing.assert_array_equal(y, mixed_frame()["label"])
    assert fake_openml[0]["data_id"] == 61 and fake_openml[0]["data_home"] == tmp_path
    X, y, *_ = load_openml("iris", data_id=61, target="flag", data_home=str(tmp_path))
    assert X.shape == (4, 4) and y.tolist() == [True, False, True, True]


def test_openml_cache_defaults_to_the_environment(fake_openml, monkeypatch, tmp_path):
    monkeypatch.setenv(OPENML_HOME_ENV, str(tmp_path / "env_home"))
    load_openml("iris", data_id=61, target=None, data_home=None)
    assert fake_openml[0]["data_home"] == tmp_path / "env_home"


def test_openml_offline_and_not_cached_fails_with_one_line(monkeypatch, tmp_path):
    def offline(*args, **kwargs):
        raise URLError(OSError(-2, "Name or service not known"))

    monkeypatch.setattr(sklearn_openml, "urlopen", offline)
    monkeypatch.setattr(sklearn_openml.time, "sleep", lambda seconds: None)  # its 3 retries
    with pytest.raises(OSError) as error:
        load_openml("iris", data_id=61, target=None, data_home=str(tmp_path))
    assert str(error.value) == (
        f"OpenML dataset 61 is not in the cache {tmp_path} and cannot be downloaded: "
        "<urlopen error [Errno -2] Name or service not known>"
    )
