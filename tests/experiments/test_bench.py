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
    assert (summary.accuracy > 0.6).all()
    assert (summary.fit_peak_rss_mb > summary.data_mb).all()  # the data stay resident in a fit
    assert (summary.first_call_seconds > 0).all()
    assert "ratio_to_fastest_reference" in (tmp_path / "bench.md").read_text()
