"""A small `make bench` runs and writes its table; no test asserts a time."""

import pandas as pd

from experiments.bench import main


def test_a_small_benchmark_writes_medians_and_ratios(tmp_path):
    main(["--cases", "adaboost", "--small-rows", "2000", "--repeats", "2",
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


def test_the_multiclass_regression_and_wide_cases_run_on_every_gbt_engine(tmp_path):
    main(["--cases", "gbt_multiclass", "gbt_regression", "gbt_wide", "--rows", "3000",
          "--mid-rows", "3000", "--small-rows", "1000", "--repeats", "1", "--no-cold",
          "--out", str(tmp_path)])
    summary = pd.read_csv(tmp_path / "bench.csv").set_index(["case", "engine"])
    engines = ["inhouse", "xgboost", "lightgbm", "sklearn"]
    for case in ("gbt_multiclass", "gbt_regression", "gbt_wide"):
        assert sorted(summary.loc[case].index) == sorted(engines)
    # 8 classes: far above chance (1/8) on every engine; regression: a positive R^2
    assert (summary.loc["gbt_multiclass", "score"] > 0.35).all()
    assert (summary.loc["gbt_regression", "score"] > 0.5).all()
    ours = summary.xs("inhouse", level="engine")
    assert ours.ratio_to_fastest_reference.notna().all()
