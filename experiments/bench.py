"""`make bench`: fit and predict times, peak memory and test accuracy of the in-house engine
against XGBoost, LightGBM and scikit-learn, on the same data with the same number of threads.

Every measurement runs in a fresh worker process (`--worker CASE ENGINE`), so that peak
resident memory is that fit's own and the thread count is set before any library starts its
pool; the engines of a case alternate (A B C A B C ...) over the repeats, and the table quotes
medians. Before it is timed, each worker fits and predicts the same case once on
WARM_UP_ROWS rows: that first call loads (or compiles) the engine's code, which a sweep or a
session pays once per process, and is reported apart as `first_call_seconds` (about 1 s for
ours, from the numba cache). The in-house engine of the first case also runs once against an
empty numba cache: its `first_call_seconds` is the cold start, compilation included.

    python -m experiments.bench [--rows 1000000] [--small-rows 100000] [--features 28]
                                [--threads 2] [--repeats 3] [--cases gbt_depthwise ...]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.datasets import make_classification
from sklearn.model_selection import train_test_split

from experiments.memory import peak_rss_mb, reset_peak_rss
from experiments.paths import PROJECT_ROOT, REPORTS_OUT

INHOUSE = "inhouse"
WARM_UP_ROWS = 2000  # rows of the untimed first fit and predict in each worker


@dataclass(frozen=True)
class Case:
    """One benchmark: its data size ("rows" or "small_rows"), the engines that run it, and
    the ratio target of the issue (ours / fastest reference; None: no target)."""

    rows: str
    engines: tuple[str, ...]
    target: str
    timed: str = "fit"


CASES = {
    "gbt_depthwise": Case("rows", (INHOUSE, "xgboost", "lightgbm", "sklearn"),
                          "fit <= 0.8x the faster of XGBoost and LightGBM"),
    "gbt_lossguide": Case("rows", (INHOUSE, "xgboost", "lightgbm", "sklearn"),
                          "fit <= 0.8x the faster of XGBoost and LightGBM"),
    "gbt_depthwise_small": Case("small_rows", (INHOUSE, "xgboost", "lightgbm", "sklearn"),
                                "fit <= 1.0x the faster of XGBoost and LightGBM"),
    "random_forest": Case("small_rows", (INHOUSE, "sklearn", "lightgbm"),
                          "fit >= 5x faster than scikit-learn, accuracy within 1 point"),
    "adaboost": Case("small_rows", (INHOUSE, "sklearn"), "fit >= 10x faster than scikit-learn"),
    "gbt_predict": Case("rows", (INHOUSE, "xgboost"), "predict <= 1.0x XGBoost", "predict"),
}
FAST_REFERENCES = {"gbt_depthwise": ("xgboost", "lightgbm"),
                   "gbt_lossguide": ("xgboost", "lightgbm"),
                   "gbt_depthwise_small": ("xgboost", "lightgbm"),
                   "random_forest": ("sklearn",), "adaboost": ("sklearn",),
                   "gbt_predict": ("xgboost",)}


def make_estimator(case: str, engine: str, threads: int):
    """The estimator of one (case, engine), hyper-parameters matched across engines."""
    import ensembles

    boosting = dict(n_estimators=100, learning_rate=0.1)
    if case.startswith("gbt"):
        lossguide = case == "gbt_lossguide"
        if engine == INHOUSE:
            shape = (dict(grow_policy="lossguide", max_leaves=31, max_depth=0) if lossguide
                     else dict(max_depth=6))
            return ensembles.GradientBoostingClassifier(n_jobs=threads, **boosting, **shape)
        if engine == "xgboost":
            import xgboost
            shape = (dict(grow_policy="lossguide", max_leaves=31, max_depth=0) if lossguide
                     else dict(max_depth=6))
            return xgboost.XGBClassifier(tree_method="hist", max_bin=256, n_jobs=threads,
                                         **boosting, **shape)
        if engine == "lightgbm":
            import lightgbm
            shape = dict(num_leaves=31) if lossguide else dict(max_depth=6, num_leaves=64)
            return lightgbm.LGBMClassifier(max_bin=255, n_jobs=threads, verbose=-1,
                                           **boosting, **shape)
        from sklearn.ensemble import HistGradientBoostingClassifier
        shape = dict(max_leaf_nodes=31) if lossguide else dict(max_depth=6, max_leaf_nodes=None)
        return HistGradientBoostingClassifier(max_iter=100, learning_rate=0.1,
                                              early_stopping=False, **shape)
    if case == "random_forest":
        if engine == INHOUSE:
            return ensembles.RandomForestClassifier(n_estimators=100, n_jobs=threads,
                                                    random_state=0)
        if engine == "lightgbm":
            import lightgbm
            return lightgbm.LGBMClassifier(boosting_type="rf", n_estimators=100,
                                           num_leaves=4096, bagging_fraction=0.632,
                                           bagging_freq=1, feature_fraction_bynode=0.2,
                                           n_jobs=threads, verbose=-1)
        from sklearn.ensemble import RandomForestClassifier
        return RandomForestClassifier(n_estimators=100, n_jobs=threads, random_state=0)
    if engine == INHOUSE:
        return ensembles.AdaBoostClassifier(n_estimators=400)
    from sklearn.ensemble import AdaBoostClassifier
    from sklearn.tree import DecisionTreeClassifier
    return AdaBoostClassifier(DecisionTreeClassifier(max_depth=1), n_estimators=400)


def benchmark_data(n_rows: int, n_features: int):
    """Synthetic binary classification (seeded), 80% to fit, 20% to score."""
    X, y = make_classification(n_samples=n_rows, n_features=n_features,
                               n_informative=n_features // 2, random_state=0)
    return train_test_split(X.astype(np.float64), y, test_size=0.2, random_state=0)


def run_worker(case: str, engine: str, n_rows: int, n_features: int, threads: int) -> dict:
    """Fit (and predict) once in this process; the measurement as a dict. The peak memory is
    that of the fit, the data included (generating the data peaks higher, so the peak is reset
    after it)."""
    X_train, X_test, y_train, y_test = benchmark_data(n_rows, n_features)
    start = time.perf_counter()
    make_estimator(case, engine, threads).fit(X_train[:WARM_UP_ROWS], y_train[:WARM_UP_ROWS]
                                              ).predict(X_test[:WARM_UP_ROWS])
    first_call_seconds = time.perf_counter() - start
    estimator = make_estimator(case, engine, threads)
    data_mb = (X_train.nbytes + X_test.nbytes + y_train.nbytes + y_test.nbytes) / 2**20
    try:
        reset_peak_rss()
    except OSError:
        pass  # not Linux: the peak includes the data generation
    start = time.perf_counter()
    estimator.fit(X_train, y_train)
    fit_seconds = time.perf_counter() - start
    fit_peak_rss_mb = peak_rss_mb()
    X_predict = X_test
    if CASES[case].timed == "predict":
        X_predict = np.tile(X_test, (int(np.ceil(n_rows / len(X_test))), 1))[:n_rows]
    start = time.perf_counter()
    predicted = estimator.predict(X_predict)
    predict_seconds = time.perf_counter() - start
    accuracy = float(np.mean(predicted[:len(y_test)] == y_test))
    return dict(case=case, engine=engine, first_call_seconds=first_call_seconds,
                fit_seconds=fit_seconds,
                predict_seconds=predict_seconds, fit_peak_rss_mb=fit_peak_rss_mb,
                data_mb=data_mb, accuracy=accuracy, rows=n_rows, predict_rows=len(X_predict))


def measure(case: str, engine: str, n_rows: int, args, cache_dir: str | None = None) -> dict:
    """run_worker in a child process with the thread count (and numba cache) of this run."""
    threads = str(args.threads)
    env = {**os.environ, "OMP_NUM_THREADS": threads, "NUMBA_NUM_THREADS": threads,
           "MKL_NUM_THREADS": threads, "OPENBLAS_NUM_THREADS": threads}
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = cache_dir
    command = [sys.executable, "-m", "experiments.bench", "--worker", case, engine,
               "--rows", str(n_rows), "--features", str(args.features),
               "--threads", threads]
    done = subprocess.run(command, cwd=PROJECT_ROOT, env=env, capture_output=True, text=True,
                          check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{case}/{engine} failed: {done.stderr.strip().splitlines()[-1]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def run_benchmark(args) -> pd.DataFrame:
    """A cold in-house run of the first case, then per case `repeats` interleaved rounds."""
    rows = []
    for case in args.cases:
        spec = CASES[case]
        n_rows = args.rows if spec.rows == "rows" else args.small_rows
        if not rows:
            with tempfile.TemporaryDirectory() as empty_cache:
                cold = measure(case, INHOUSE, n_rows, args, cache_dir=empty_cache)
            rows.append({**cold, "engine": f"{INHOUSE} (cold)", "repeat": 0})
        for repeat in range(1, args.repeats + 1):
            for engine in spec.engines:
                rows.append({**measure(case, engine, n_rows, args), "repeat": repeat})
                print(json.dumps(rows[-1]), flush=True)
    return pd.DataFrame(rows)


def summarize(runs: pd.DataFrame) -> pd.DataFrame:
    """Medians per (case, engine), and ours / the fastest reference of the issue's target."""
    medians = (runs.groupby(["case", "engine"], sort=False)
               [["first_call_seconds", "fit_seconds", "predict_seconds", "fit_peak_rss_mb",
                 "data_mb", "accuracy"]]
               .median()
               .reset_index())
    medians["repeats"] = runs.groupby(["case", "engine"], sort=False).size().values
    ratios = []
    for _, row in medians.iterrows():
        timed = f"{CASES[row.case].timed}_seconds"
        references = medians[(medians.case == row.case)
                             & medians.engine.isin(FAST_REFERENCES[row.case])]
        fastest = references[timed].min() if len(references) else np.nan
        ratios.append(row[timed] / fastest if row.engine.startswith(INHOUSE) else np.nan)
    medians["ratio_to_fastest_reference"] = ratios
    medians["target"] = [CASES[case].target for case in medians.case]
    return medians


def write_results(summary: pd.DataFrame, out_dir: Path, args) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    summary.to_csv(out_dir / "bench.csv", index=False)
    header = (f"# Benchmark\n\nMedians of {args.repeats} interleaved runs per engine, "
              f"{args.threads} threads, {args.features} features, {args.rows} rows "
              f"({args.small_rows} for the small cases); ratio = ours / the fastest reference "
              "of the target (time of the timed step). `first_call_seconds`: a first fit "
              f"and predict on {WARM_UP_ROWS} rows in the worker, before the timed ones "
              "(loading the engine's code); `inhouse (cold)` is a worker with an empty numba "
              "cache, whose first call compiles.\n\n")
    (out_dir / "bench.md").write_text(header + summary.to_markdown(index=False, floatfmt=".3g")
                                      + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.bench")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--small-rows", type=int, default=100_000)
    parser.add_argument("--features", type=int, default=28)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    parser.add_argument("--out", type=Path, default=REPORTS_OUT)
    parser.add_argument("--worker", nargs=2, metavar=("CASE", "ENGINE"))
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(run_worker(*args.worker, args.rows, args.features, args.threads)))
        return 0
    summary = summarize(run_benchmark(args))
    write_results(summary, args.out, args)
    print((args.out / "bench.md").read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
