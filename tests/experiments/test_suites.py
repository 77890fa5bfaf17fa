"""A benchmark suite end to end, offline: a fake suite of two datasets (categorical and missing
values) written into a temporary cache by the test, swept, stored in MLflow and reported with
its datasets table; uncached datasets stop the sweep with one line naming them all before any
run, or (suite.uncached=skip) are skipped jobs; `fetch` writes what OpenML answers into the
cache (tests/experiments/test_openml.py: against recorded OpenML responses) and `verify` finds
a damaged file."""

import json

import numpy as np
import pandas as pd
import pytest

from experiments.data import fetch
from experiments.data.suite_cache import dataset_paths, read_dataset, write_dataset
from reports.build import build_report

SUITE_YAML = """# @package suite
defaults:
  - suite_schema
name: fake
preprocessing: {max_train_rows: 200}
datasets:
  toy_clf: {data_id: 90001, target: label, task: binary}
  toy_reg: {data_id: 90002, target: target, task: regression}
"""


def toy_frames() -> dict[str, tuple[pd.DataFrame, str, str]]:
    """name -> (frame, target, task): a categorical feature with missing values and a label
    that needs it (y = (x > 0) xor (colour is red)), and a regression frame."""
    rng = np.random.RandomState(0)
    n = 300
    colour = pd.Categorical(rng.choice(["red", "green", "blue", None], n))
    x = rng.normal(size=n)
    x[::17] = np.nan
    label = np.where((x > 0) ^ (np.asarray(colour) == "red"), "yes", "no")
    classification = pd.DataFrame({"x": x, "colour": colour, "label": pd.Categorical(label)})
    regression = pd.DataFrame({"a": rng.normal(size=n),
                               "kind": pd.Categorical(rng.choice(list("abc"), n)),
                               "target": rng.normal(size=n)})  # fmt: skip
    return {"toy_clf": (classification, "label", "binary"),
            "toy_reg": (regression, "target", "regression")}  # fmt: skip


@pytest.fixture
def fake_suite(tmp_path, monkeypatch):
    """The suite's yaml in a config directory of its own (hydra.searchpath) and its cache."""
    conf = tmp_path / "conf" / "suite"
    conf.mkdir(parents=True)
    (conf / "fake.yaml").write_text(SUITE_YAML)
    monkeypatch.setenv("ENSEMBLES_OPENML_HOME", str(tmp_path / "openml"))
    return [f"hydra.searchpath=[file://{tmp_path / 'conf'}]", "+sweep=suite", "suite=fake"]


def fill_cache(cache, names=("toy_clf", "toy_reg")) -> None:
    for index, (name, (frame, target, task)) in enumerate(toy_frames().items()):
        if name in names:
            write_dataset(frame, name, "fake", 90001 + index, 1, target, task, str(cache))


@pytest.mark.slow
def test_a_suite_sweep_runs_offline_from_the_cache_into_mlflow_and_the_report(
        cli, cli_runs, fake_suite, tmp_path):
    fill_cache(tmp_path / "openml" / "suites")
    result = cli(*fake_suite, "method=gbt,random_forest", "engine=inhouse,sklearn", "seed=0",
                 "method.n_estimators=10")
    assert result.returncode == 0, result.stderr
    runs = cli_runs("fake")
    assert len(runs) == 8 and {run.data.tags["status"] for run in runs} == {"ok"}
    assert {run.data.tags["dataset"] for run in runs} == {"toy_clf", "toy_reg"}
    classified = [run for run in runs if run.data.tags["dataset"] == "toy_clf"]
    assert all(run.data.metrics["test_error"] < 0.1 for run in classified)  # needs the colour
    tags = classified[0].data.tags
    assert (tags["max_train_rows"], tags["data.categorical_features"]) == ("200", "1")
    assert tags["data.source"] == "OpenML 90001"
    build_report(f"sqlite:///{tmp_path / 'mlflow.db'}", "fake", tmp_path / "out")
    table = (tmp_path / "out" / "datasets.md").read_text()
    assert "| toy_clf   | OpenML 90001 |     binary |    300 |" in table
    assert "| toy_reg" in table and (tmp_path / "out" / "datasets.tex").exists()


def test_uncached_datasets_stop_the_sweep_with_one_line_naming_them_all_before_any_run(
        cli, fake_suite, tmp_path):
    result = cli(*fake_suite, "method=gbt", "engine=inhouse", "seed=0")
    assert result.returncode != 0
    assert [line for line in result.stderr.splitlines() if "error" in line] == [
        f"error: datasets toy_clf (OpenML 90001), toy_reg (OpenML 90002) of suite fake are not "
        f"in the cache {tmp_path / 'openml' / 'suites'}; on a machine with internet run: make "
        "data SUITE=fake, or run the cached ones with suite.uncached=skip"]
    assert not (tmp_path / "mlflow.db").exists()


def test_with_uncached_skip_the_sweep_runs_the_cached_datasets_and_skips_the_others(
        cli, cli_runs, fake_suite, tmp_path):
    """toy_reg not in the cache: its job is a skipped run naming `make data`, toy_clf's runs;
    once toy_reg is fetched, the same sweep (resume) runs it."""
    cache = tmp_path / "openml" / "suites"
    fill_cache(cache, names=("toy_clf",))
    sweep = (*fake_suite, "suite.uncached=skip", "method=random_forest", "engine=sklearn",
             "seed=0", "method.n_estimators=5")  # fmt: skip
    result = cli(*sweep)
    assert result.returncode == 0, result.stderr
    missing = (f"dataset toy_reg (OpenML 90002) of suite fake is not in the cache {cache}; on a "
               "machine with internet run: make data SUITE=fake")  # fmt: skip
    assert [line for line in result.stderr.splitlines() if line.startswith("warning:")] == [
        f"warning: {missing}; their jobs are logged as skipped (suite.uncached=skip)"]
    runs = {run.data.tags["dataset"]: run.data.tags for run in cli_runs("fake")}
    assert runs["toy_clf"]["status"] == "ok"
    assert (runs["toy_reg"]["status"], runs["toy_reg"]["skip_reason"]) == ("skipped", missing)
    fill_cache(cache, names=("toy_reg",))
    assert cli(*sweep).returncode == 0
    statuses = sorted((run.data.tags["dataset"], run.data.tags["status"])
                      for run in cli_runs("fake"))  # fmt: skip
    assert statuses == [("toy_clf", "ok"), ("toy_reg", "ok"), ("toy_reg", "skipped")]


def test_a_name_the_suite_lacks_is_refused(cli, fake_suite):
    fill_cache_args = [*fake_suite[:1], "dataset=suite", "suite=fake", "dataset.name=toy"]
    result = cli(*fill_cache_args)
    assert result.stderr.strip().splitlines()[-1] == (
        "error: unknown dataset.name 'toy' of suite fake; choose one of: toy_clf, toy_reg")


def test_fetch_writes_what_openml_answers_and_verify_finds_a_damaged_file(tmp_path,
                                                                          monkeypatch):
    suite_file = tmp_path / "fake.yaml"
    suite_file.write_text(SUITE_YAML)
    frames = toy_frames()

    def fetch_frame(data_id, data_home):
        name = "toy_clf" if data_id == 90001 else "toy_reg"
        return frames[name][0], {"version": "3", "default_target_attribute": "unused"}

    monkeypatch.setattr(fetch, "fetch_frame", fetch_frame)
    cache = str(tmp_path / "cache")
    assert fetch.main(["fetch", str(suite_file), "--cache", cache]) == 0
    frame, metadata = read_dataset("fake", "toy_clf", 90001, cache)
    assert isinstance(frame["colour"].dtype, pd.CategoricalDtype)  # dtypes kept
    assert (metadata.version, metadata.rows, metadata.categorical_features) == (3, 300, 1)
    assert metadata.class_counts == {"no": 164, "yes": 136}
    parquet, meta = dataset_paths("fake", "toy_reg", cache)
    assert json.loads(meta.read_text())["task"] == "regression"
    parquet.write_bytes(parquet.read_bytes()[:-10] + b"0123456789")
    assert fetch.main(["verify", str(suite_file), "--cache", cache]) == 1


def test_a_dataset_larger_than_the_available_memory_is_a_skipped_job(store_uri, runs_of,
                                                                     tmp_path, monkeypatch):
    """toy_clf (300 rows x 2 features) needs 4 x 300 x 2 x 8 bytes = 0.0183 MB: skipped on a
    machine with 0.01 MB available, with the estimate in its reason."""
    from hydra import compose, initialize_config_dir

    from experiments import run
    from experiments.paths import CONF_DIR

    fill_cache(tmp_path / "cache")
    conf = tmp_path / "conf" / "suite"
    conf.mkdir(parents=True)
    (conf / "fake.yaml").write_text(SUITE_YAML)
    overrides = [f"mlflow.tracking_uri={store_uri}", "mlflow.experiment_name=too_large",
                 "dataset=suite", "suite=fake", "dataset.name=toy_clf",
                 f"dataset.cache={tmp_path / 'cache'}",
                 f"hydra.searchpath=[file://{tmp_path / 'conf'}]"]  # fmt: skip
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose("config", overrides=overrides)
    monkeypatch.setattr(run, "available_mb", lambda: 0.01)
    assert run.run_job(cfg) == "skipped"
    [logged] = runs_of(cfg)
    assert logged.data.tags["skip_reason"] == (
        "dataset toy_clf (300 rows x 2 features) needs about 0.0183 MB, 0.01 MB available")


@pytest.mark.parametrize(("encoding", "n_columns"), [("ordinal", 2), ("onehot", 1 + 4)])
def test_a_categorical_feature_is_ordinal_codes_or_one_column_per_category(
        compose_job, tmp_path, encoding, n_columns):
    """toy_clf's colour (red, green, blue, missing): one column of codes 0..2 with NaN, or four
    0/1 columns (blue, green, red, missing) whose rows each hold one 1."""
    from experiments.data.datasets import load_dataset

    fill_cache(tmp_path / "cache")
    conf = tmp_path / "conf" / "suite"
    conf.mkdir(parents=True)
    (conf / "fake.yaml").write_text(SUITE_YAML)
    cfg = compose_job("dataset=suite", "suite=fake", "dataset.name=toy_clf",
                      f"dataset.cache={tmp_path / 'cache'}", f"dataset.categorical={encoding}",
                      f"hydra.searchpath=[file://{tmp_path / 'conf'}]")  # fmt: skip
    X, _ = load_dataset(cfg.dataset)
    assert X.shape == (300, n_columns)
    colour = pd.read_parquet(tmp_path / "cache" / "fake" / "toy_clf.parquet")["colour"]
    if encoding == "ordinal":
        expected = colour.cat.codes.to_numpy().astype(float)
        np.testing.assert_array_equal(X[:, 1], np.where(expected >= 0, expected, np.nan))
    else:
        indicators = X[:, 1:]
        assert set(np.unique(indicators)) == {0.0, 1.0}
        assert (indicators.sum(axis=1) == 1).all()
        np.testing.assert_array_equal(indicators[:, 3] == 1, colour.isna().to_numpy())
        np.testing.assert_array_equal(indicators[:, 2] == 1, (colour == "red").to_numpy())


def _native_job(compose_job, tmp_path, *overrides):
    fill_cache(tmp_path / "cache")
    conf = tmp_path / "conf" / "suite"
    conf.mkdir(parents=True, exist_ok=True)
    (conf / "fake.yaml").write_text(SUITE_YAML)
    return compose_job("dataset=suite", "suite=fake", "dataset.name=toy_clf",
                       f"dataset.cache={tmp_path / 'cache'}", "dataset.categorical=native",
                       f"hydra.searchpath=[file://{tmp_path / 'conf'}]", *overrides)


def test_native_categories_reach_every_engine_in_its_own_words(compose_job, tmp_path):
    """toy_clf's colour (column 1) with categorical=native: each GBT engine is told to split it
    as categories and learns the xor with it; scikit-learn's forest reads the codes as
    numbers and its approximation tag says so."""
    from experiments.data.datasets import categorical_columns, load_dataset
    from experiments.engines import build

    cfg = _native_job(compose_job, tmp_path, "method=gbt", "method.n_estimators=20")
    X, y = load_dataset(cfg.dataset)
    assert categorical_columns(cfg.dataset) == (1,)
    said = {"inhouse": {"categorical_features": [1]},
            "sklearn": {"categorical_features": [1]},
            "xgboost": {"enable_categorical": True, "feature_types": ["q", "c"]},
            "lightgbm": {"categorical_column": [1]}}  # fmt: skip
    for engine, expected in said.items():
        built = build(cfg, X.shape, engine)
        params = built.estimator.get_params()
        assert {name: params[name] for name in expected} == expected, engine
        assert "ordinal codes" not in (built.approximation or "")
        assert np.mean(built.estimator.fit(X, y).predict(X) == y) > 0.95, engine
    forest = _native_job(compose_job, tmp_path, "method=random_forest")
    assert "has no native categorical splits" in build(forest, X.shape, "sklearn").approximation
    assert "categorical_features" not in build(forest, X.shape, "sklearn").estimator.get_params()
    assert build(forest, X.shape, "inhouse").estimator.get_params()["categorical_features"] == [1]


def test_a_native_job_logs_its_encoding(compose_job, runs_of, tmp_path):
    from experiments import run

    cfg = _native_job(compose_job, tmp_path, "method=gbt", "method.n_estimators=10")
    assert run.run_job(cfg) == "ok"
    [logged] = runs_of(cfg)
    assert logged.data.params["dataset.categorical"] == "native"
    assert logged.data.metrics["test_error"] < 0.1
