"""A small `make bench` runs and writes its table; no test asserts a time."""

import argparse

import numpy as np
import pandas as pd
import pytest
from threadpoolctl import threadpool_limits

from experiments import bench
from experiments.bench import (
    CASES,
    MAX_TIMED_FITS,
    main,
    median_fit_seconds,
    run_worker,
    study_table,
    summarize,
    write_results,
)

pytestmark = pytest.mark.slow  # each case runs in fresh worker processes


def test_a_small_benchmark_writes_medians_and_ratios(tmp_path):
    main(["--cases", "adaboost", "--small-rows", "2000", "--repeats", "2", "--threads", "1",
          "--out", str(tmp_path)])
    summary = pd.read_csv(tmp_path / "bench.csv")
    assert set(summary.engine) == {"inhouse (cold)", "inhouse", "sklearn"}
    assert (summary.loc[summary.engine == "inhouse", "repeats"] == 2).all()
    ours = summary[summary.engine == "inhouse"].set_index("case")
    assert ours.ratio_to_fastest_reference.notna().all()
    assert (summary.score > 0.6).all()
    assert summary.cpu.nunique() == 1 and "CPU: " in (tmp_path / "bench.md").read_text()
    assert (summary.fit_peak_rss_mb > summary.data_mb).all()  # the data stay resident in a fit
    assert (summary.first_call_seconds > 0).all()
    assert "ratio_to_fastest_reference" in (tmp_path / "bench.md").read_text()
    ours_fits = summary.timed_fits[summary.engine.str.startswith("inhouse")]
    assert (ours_fits > 1).all()  # our fits of 1,600 rows take well under a second


class _ClockedFit:
    """An estimator whose fits take the given durations on a fake clock."""

    def __init__(self, durations):
        self.now, self.durations, self.fits = 0.0, list(durations), 0

    def clock(self):
        return self.now

    def fit(self, X, y):
        self.now += self.durations[self.fits % len(self.durations)]
        self.fits += 1
        return self


@pytest.mark.parametrize(("durations", "fits", "median"), [
    ([0.3, 0.1, 0.2, 0.5, 9.0], 4, 0.25),  # until the fits took a second: 1.1 s
    ([2.0, 0.1], 1, 2.0),  # a long fit is timed once
    ([0.001], MAX_TIMED_FITS, 0.001),  # at most MAX_TIMED_FITS
])
def test_a_short_fit_is_timed_again_and_its_median_reported(monkeypatch, durations, fits,
                                                           median):
    estimator = _ClockedFit(durations)
    monkeypatch.setattr(bench.time, "perf_counter", estimator.clock)
    seconds, timed_fits = median_fit_seconds(estimator, None, None, 1.0)
    assert (timed_fits, estimator.fits) == (fits, fits)
    assert np.isclose(seconds, median)


def test_the_multiclass_regression_and_wide_cases_run_on_every_gbt_engine():
    # in-process workers at one thread (the subprocess round-trip is tested above; two-thread
    # fits spin while the other test worker holds the second core: docs/small_tables.md)
    sizes = {"gbt_multiclass": 1500, "gbt_regression": 1500, "gbt_wide": 600}
    with threadpool_limits(limits=1):
        runs = pd.DataFrame([run_worker(case, engine, n_rows, 28, 1)
                             for case, n_rows in sizes.items()
                             for engine in CASES[case].engines])  # fmt: skip
    summary = summarize(runs).set_index(["case", "engine"])
    engines = ["inhouse", "xgboost", "lightgbm", "sklearn"]
    for case in sizes:
        assert sorted(summary.loc[case].index) == sorted(engines)
    # 8 classes: far above chance (1/8) on every engine; regression: a positive R^2
    assert (summary.loc["gbt_multiclass", "score"] > 0.35).all()
    assert (summary.loc["gbt_regression", "score"] > 0.5).all()
    assert (summary.loc["gbt_wide", "features"] == 500).all()
    ours = summary.xs("inhouse", level="engine")
    assert ours.ratio_to_fastest_reference.notna().all()


def targets_of(out_dir) -> str:
    """The targets table of bench.md (between its two headings)."""
    text = (out_dir / "bench.md").read_text()
    return text.split("## Targets")[1].split("## Medians")[0]


def test_the_fit_memory_over_the_data_is_compared_with_xgboosts(tmp_path):
    main(["--cases", "gbt_depthwise", "--rows", "3000", "--repeats", "1", "--no-cold",
          "--threads", "1", "--out", str(tmp_path)])
    summary = pd.read_csv(tmp_path / "bench.csv").set_index("engine")
    # one repeat: each median is that run's value, so the columns can be recomputed by hand
    over_data = summary.fit_peak_rss_mb - summary.data_mb
    assert np.allclose(summary.fit_memory_over_data_mb, over_data)
    assert (summary.fit_memory_over_data_mb > 0).all()
    assert (summary.fit_added_mb >= 0).all() and (summary.fit_added_mb < over_data).all()
    ratio = summary.memory_ratio_to_xgboost
    added = summary.fit_added_mb
    assert np.isclose(ratio["inhouse"], added["inhouse"] / added["xgboost"])
    assert 0 < ratio["inhouse"] < np.inf
    assert ratio.drop("inhouse").isna().all()  # only ours is compared
    targets = targets_of(tmp_path)
    assert "memory the fit adds <= 0.7x XGBoost's" in targets
    assert f"{ratio['inhouse']:.3g}" in targets


def test_two_threads_are_compared_with_one_on_the_inhouse_engine(tmp_path):
    main(["--cases", "gbt_threads", "--rows", "3000", "--repeats", "1", "--no-cold",
          "--out", str(tmp_path)])
    summary = pd.read_csv(tmp_path / "bench.csv").set_index("engine")
    assert sorted(summary.index) == ["inhouse", "inhouse (1 thread)"]
    speedup = summary.speedup_over_one_thread
    fit = summary.fit_seconds
    assert np.isclose(speedup["inhouse"], fit["inhouse (1 thread)"] / fit["inhouse"])
    assert 0 < speedup["inhouse"] < np.inf
    assert np.isnan(speedup["inhouse (1 thread)"])
    assert (summary.score > 0.8).all()  # the same model at either thread count
    targets = targets_of(tmp_path)
    assert "fit at 2 threads >= 1.7x faster than at 1" in targets
    assert f"{speedup['inhouse']:.3g}" in targets


def test_the_lab_overhead_is_measured_on_a_real_sweep(tmp_path):
    main(["--cases", "lab_overhead", "--sweep-jobs", "3", "--out", str(tmp_path)])
    [ours] = pd.read_csv(tmp_path / "bench.csv").itertuples()
    assert (ours.case, ours.engine, ours.repeats) == ("lab_overhead", "inhouse", 3)
    # a random forest of 100 trees on breast cancer: fit and predict take time, and the job
    # more (its MLflow logging at least)
    assert 0 < ours.predict_seconds < ours.fit_seconds < ours.job_wall_seconds < 60
    assert 0 <= ours.lab_overhead_seconds < ours.job_wall_seconds
    targets = targets_of(tmp_path)
    assert "median over a sweep's jobs <= 0.3 s" in targets
    assert f"{ours.lab_overhead_seconds:.3g}" in targets


def test_the_cold_start_compiles_every_estimator_against_an_empty_cache(tmp_path):
    main(["--cases", "cold_start", "--out", str(tmp_path)])
    summary = pd.read_csv(tmp_path / "bench.csv")
    [ours] = summary.itertuples()
    assert (ours.case, ours.engine) == ("cold_start", "inhouse")
    assert ours.cold_start_seconds > 0
    assert ours.other_checkout_seconds > 0  # that it loads: tests/engine/test_kernel_cache.py
    assert "in total <= 15 s" in (tmp_path / "bench.md").read_text()
    assert "another checkout of the same sources" in (tmp_path / "bench.md").read_text()


STUDY_CASES = ["gbt_2k", "gbt_10k", "random_forest_table_codes", "random_forest_table_native",
               "extra_trees_table_codes", "extra_trees_table_native", "adaboost_table",
               "gbt_tuned"]


def test_the_study_shaped_cases_run_on_every_engine_with_their_targets(tmp_path):
    # in-process workers at 200 rows and one thread (the subprocess round-trip is tested
    # above; OpenMP's barriers on a loaded machine slowed HistGradientBoosting's 100 rounds on
    # 160 rows to a minute at two threads)
    args = argparse.Namespace(repeats=1, threads=1, features=28, rows=0, mid_rows=0,
                              small_rows=0, sweep_jobs=0, trials=2, fit_seconds=0.0)
    with threadpool_limits(limits=1):
        runs = pd.DataFrame([run_worker(case, engine, 200, 28, 1, n_trials=2)
                             for case in STUDY_CASES for engine in CASES[case].engines])
    summary = summarize(runs)
    write_results(summary, tmp_path, args)
    assert summary.groupby("case").engine.apply(set).to_dict() == {
        case: set(CASES[case].engines) for case in STUDY_CASES}
    every_gbt = {"inhouse", "xgboost", "lightgbm", "sklearn"}
    assert set(summary[summary.case == "gbt_10k"].engine) == every_gbt
    assert set(summary[summary.case == "random_forest_table_native"].engine) == every_gbt
    assert set(summary[summary.case == "gbt_tuned"].engine) == {"inhouse", "xgboost"}
    ours = summary[summary.engine == "inhouse"].set_index("case")
    assert ours.ratio_to_fastest_reference.notna().all()
    assert (ours.features.loc[["gbt_2k", "gbt_10k"]] == [10, 20]).all()
    tuned = summary[summary.case == "gbt_tuned"]
    assert np.allclose(tuned.trials_per_minute, 60 * 2 / tuned.fit_seconds)
    # a table of 30 numeric and 40 categorical columns of 3-25 levels, coded 0..K-1
    X, _ = study_table(500)
    codes = [np.unique(X[:, j]) for j in range(30, 70)]
    assert X.shape == (500, 70) and all(3 <= len(code) <= 25 for code in codes)
    assert all((code == np.arange(len(code))).all() for code in codes)
    targets = targets_of(tmp_path)
    for case in STUDY_CASES:
        for text in CASES[case].targets.values():
            assert text in targets
        assert f"{ours.loc[case, 'ratio_to_fastest_reference']:.3g}" in targets
