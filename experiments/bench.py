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
                                [--mid-rows 300000] [--threads 2] [--repeats 3]
                                [--cases gbt_depthwise ...] [--no-cold]
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
from hydra import compose, initialize_config_dir
from sklearn.base import clone
from sklearn.datasets import make_classification, make_regression
from sklearn.metrics import r2_score
from sklearn.model_selection import train_test_split

from experiments.configs import register_configs
from experiments.engines import build_estimator
from experiments.environment import cpu_model
from experiments.memory import peak_rss_mb, reset_peak_rss
from experiments.paths import CONF_DIR, PROJECT_ROOT, REPORTS_OUT

INHOUSE = "inhouse"
WARM_UP_ROWS = 2000  # rows of the untimed first fit and predict in each worker
register_configs()


GBT = ("method=gbt", "method.n_estimators=100", "method.learning_rate=0.1")
LOSSGUIDE = ("method.grow_policy=lossguide", "method.max_leaves=31", "method.max_depth=0")


@dataclass(frozen=True)
class Case:
    """One benchmark: its data size ("rows", "mid_rows" or "small_rows"), the engines that run
    it, the ratio target of the issue (ours / fastest reference), the lab's method config
    (Hydra overrides, mapped to every engine as a sweep maps it), the step that is timed, and
    its data: task, classes, features (None: --features)."""

    rows: str
    engines: tuple[str, ...]
    target: str
    method: tuple[str, ...]
    timed: str = "fit"
    task: str = "binary"
    n_classes: int = 2
    n_features: int | None = None

    def dataset_overrides(self) -> list[str]:
        """The dataset config a sweep would use for this data (the mapping picks the loss)."""
        if self.task == "regression":
            return ["dataset=synthetic_regression"]
        return ["dataset=synthetic_classification", f"dataset.task={self.task}",
                f"dataset.n_classes={self.n_classes}"]


GBT_ENGINES = (INHOUSE, "xgboost", "lightgbm", "sklearn")
CASES = {
    "gbt_depthwise": Case("rows", GBT_ENGINES,
                          "fit <= 0.6x the faster of XGBoost and LightGBM", GBT),
    "gbt_lossguide": Case("rows", GBT_ENGINES,
                          "fit <= 0.7x the faster of XGBoost and LightGBM", GBT + LOSSGUIDE),
    "gbt_depthwise_small": Case("small_rows", GBT_ENGINES,
                                "fit <= 0.8x the faster of XGBoost and LightGBM", GBT),
    "random_forest": Case("small_rows", (INHOUSE, "sklearn"),
                          "fit >= 10x faster than scikit-learn; predict and peak memory <= "
                          "scikit-learn's", ("method=random_forest", "method.n_estimators=100")),
    "adaboost": Case("small_rows", (INHOUSE, "sklearn"), "fit >= 10x faster than scikit-learn",
                     ("method=adaboost", "method.n_estimators=400")),
    "gbt_predict": Case("rows", (INHOUSE, "xgboost"), "predict <= 0.7x XGBoost", GBT,
                        "predict"),
    "gbt_multiclass": Case("mid_rows", GBT_ENGINES,
                           "fit <= 0.7x the faster of XGBoost and LightGBM", GBT,
                           task="multiclass", n_classes=8),
    "gbt_regression": Case("rows", GBT_ENGINES,
                           "fit <= 0.7x the faster of XGBoost and LightGBM", GBT,
                           task="regression"),
    "gbt_wide": Case("small_rows", GBT_ENGINES,
                     "fit <= 0.8x the faster of XGBoost and LightGBM", GBT, n_features=500),
}
GBT_REFERENCES = ("xgboost", "lightgbm")
FAST_REFERENCES = {"gbt_depthwise": GBT_REFERENCES, "gbt_lossguide": GBT_REFERENCES,
                   "gbt_depthwise_small": GBT_REFERENCES, "gbt_multiclass": GBT_REFERENCES,
                   "gbt_regression": GBT_REFERENCES, "gbt_wide": GBT_REFERENCES,
                   "random_forest": ("sklearn",), "adaboost": ("sklearn",),
                   "gbt_predict": ("xgboost",)}


def make_estimator(case: str, engine: str, threads: int, shape: tuple[int, int]):
    """The estimator of one (case, engine): the case's method config on its task, built for
    the engine by the sweeps' own mapping (experiments.engines)."""
    overrides = [*CASES[case].method, *CASES[case].dataset_overrides(), f"engine={engine}",
                 f"engine.n_jobs={threads}"]
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose("config", overrides=overrides)
    return build_estimator(cfg, shape)


def benchmark_data(spec: Case, n_rows: int, n_features: int):
    """The case's synthetic data (seeded: make_classification with the case's classes, or
    make_regression), 80% to fit, 20% to score."""
    informative = min(n_features // 2, 30)
    if spec.task == "regression":
        X, y = make_regression(n_samples=n_rows, n_features=n_features,
                               n_informative=informative, noise=10.0, random_state=0)
    else:
        X, y = make_classification(n_samples=n_rows, n_features=n_features,
                                   n_informative=informative, n_classes=spec.n_classes,
                                   random_state=0)
    return train_test_split(X.astype(np.float64), y, test_size=0.2, random_state=0)


def run_worker(case: str, engine: str, n_rows: int, n_features: int, threads: int) -> dict:
    """Fit (and predict) once in this process; the measurement as a dict. The peak memory is
    that of the fit, the data included (generating the data peaks higher, so the peak is reset
    after it). `score`: test accuracy, or R^2 for regression."""
    spec = CASES[case]
    n_features = spec.n_features or n_features
    X_train, X_test, y_train, y_test = benchmark_data(spec, n_rows, n_features)
    estimator = make_estimator(case, engine, threads, X_train.shape)
    start = time.perf_counter()
    clone(estimator).fit(X_train[:WARM_UP_ROWS], y_train[:WARM_UP_ROWS]
                         ).predict(X_test[:WARM_UP_ROWS])
    first_call_seconds = time.perf_counter() - start
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
    predicted = predicted[:len(y_test)]
    score = (r2_score(y_test, predicted) if spec.task == "regression"
             else float(np.mean(predicted == y_test)))  # fmt: skip
    return dict(case=case, engine=engine, first_call_seconds=first_call_seconds,
                fit_seconds=fit_seconds,
                predict_seconds=predict_seconds, fit_peak_rss_mb=fit_peak_rss_mb,
                data_mb=data_mb, score=score, rows=n_rows, features=n_features,
                predict_rows=len(X_predict))


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
    """A cold in-house run of the first case (unless --no-cold), then per case `repeats`
    interleaved rounds."""
    rows = []
    for case in args.cases:
        spec = CASES[case]
        n_rows = {"rows": args.rows, "mid_rows": args.mid_rows,
                  "small_rows": args.small_rows}[spec.rows]  # fmt: skip
        if not rows and not args.no_cold:
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
                 "data_mb", "score"]]
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
    summary.insert(0, "cpu", cpu_model())
    summary.to_csv(out_dir / "bench.csv", index=False)
    header = (f"# Benchmark\n\nCPU: {cpu_model()}. Medians of {args.repeats} interleaved "
              f"runs per engine, {args.threads} threads, {args.features} features (500 for "
              f"gbt_wide), {args.rows} rows ({args.mid_rows} for gbt_multiclass, "
              f"{args.small_rows} for the small cases); `score`: test accuracy, R^2 for "
              "regression; ratio = ours / the fastest reference "
              "of the target (time of the timed step). `first_call_seconds`: a first fit "
              f"and predict on {WARM_UP_ROWS} rows in the worker, before the timed ones "
              "(loading the engine's code); `inhouse (cold)` is a worker with an empty numba "
              "cache, whose first call compiles.\n\n")
    (out_dir / "bench.md").write_text(header + summary.to_markdown(index=False, floatfmt=".3g")
                                      + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.bench")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--mid-rows", type=int, default=300_000)
    parser.add_argument("--small-rows", type=int, default=100_000)
    parser.add_argument("--features", type=int, default=28)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    parser.add_argument("--out", type=Path, default=REPORTS_OUT)
    parser.add_argument("--no-cold", action="store_true", help="skip the empty-cache run")
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
