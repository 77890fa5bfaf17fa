"""`make bench`: fit and predict times, peak memory and test accuracy of the in-house engine
against XGBoost, LightGBM and scikit-learn, on the same data with the same number of threads.

Every measurement runs in a fresh worker process (`--worker CASE ENGINE`), so that peak
resident memory is that fit's own and the thread count is set before any library starts its
pool; the engines of a case alternate (A B C A B C ...) over the repeats, and the table quotes
medians. Before it is timed, each worker fits and predicts the same case once on
WARM_UP_ROWS rows: that first call loads (or compiles) the engine's code, which a sweep or a
session pays once per process, and is reported apart as `first_call_seconds` (about 1 s for
ours, from the numba cache). The in-house engine of the first case also runs once against an
empty numba cache: its `first_call_seconds` is that case's cold start, compilation included;
the case `cold_start` times the whole warm-up (every estimator) against an empty cache.
A worker times a short fit again until its fits took --fit-seconds, and reports their median
(median_fit_seconds): a study fits thousands of models in a warm process.

Beside time: `fit_memory_over_data_mb` = fit peak RSS - data; `fit_added_mb` = fit peak RSS -
RSS just before the fit (the data, the interpreter and every library the worker imported are
resident then: the fit's own memory), and ours / XGBoost's on it (`memory_ratio_to_xgboost`);
`gbt_threads` fits the in-house engine of gbt_depthwise at 1
thread and at --threads (`speedup_over_one_thread` = fit at 1 / fit at --threads);
`lab_overhead` runs a real sweep and reports, per job, its wall time minus its fit and predict
time (`job_overheads` says what the wall time includes). bench.md opens with each target of the
issue beside the value it bounds.

    python -m experiments.bench [--rows 1000000] [--small-rows 100000] [--features 28]
                                [--mid-rows 300000] [--threads 2] [--repeats 3]
                                [--sweep-jobs 10] [--cases gbt_depthwise ...] [--no-cold]
                                [--cap-rows N] [--trials 20] [--fit-seconds 1]

The cases of issue 43 (gbt_2k ... gbt_tuned) have their own sizes, the shapes studies run on
(docs/small_tables.md); --cap-rows shrinks them for a quick run.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import optuna
import pandas as pd
from hydra import compose, initialize_config_dir
from mlflow import MlflowClient
from sklearn.base import clone
from sklearn.datasets import make_classification, make_regression
from sklearn.metrics import r2_score
from sklearn.model_selection import train_test_split

from experiments.configs import register_configs
from experiments.engines import build
from experiments.engines.categorical import with_native_categories
from experiments.environment import cpu_model
from experiments.memory import peak_rss_mb, reset_peak_rss
from experiments.paths import CONF_DIR, PROJECT_ROOT, REPORTS_OUT
from experiments.tuning.search import with_params
from experiments.tuning.space import distributions

INHOUSE = "inhouse"
ONE_THREAD = "1 thread"  # engine label suffix of a case's runs at one thread: "inhouse (1 thread)"
WARM_UP_ROWS = 2000  # rows of the untimed first fit and predict in each worker
MAX_TIMED_FITS = 25  # fits a worker times at most (median_fit_seconds)
register_configs()


GBT = ("method=gbt", "method.n_estimators=100", "method.learning_rate=0.1")
LOSSGUIDE = ("method.grow_policy=lossguide", "method.max_leaves=31", "method.max_depth=0")


@dataclass(frozen=True)
class Case:
    """One benchmark: its data size ("rows", "mid_rows" or "small_rows"; "bundled" for a sweep
    on the dataset its overrides name; a number: the case's own rows, at most --cap-rows),
    the engines that run it, the targets of the issue ({summary column: the bound on its value
    in our row}), the lab's method config (Hydra overrides, mapped to every engine as a sweep
    maps it), the step that is timed ("fit", "predict", or "lab_overhead": a whole sweep), its
    data: task, classes, features (None: --features), whether each engine also runs at one
    thread, the table (None: make_classification's numeric columns; "codes" or "native": the
    real-shaped table of study_table, its categorical columns read as ordinal codes or split
    natively), for a tuned study's throughput, `trials`: the timed fit is a loop of
    --trials fits of configurations sampled from the method's search space, and `references`:
    the engines whose fastest time its ratio divides by (none: no ratio)."""

    rows: str | int
    engines: tuple[str, ...]
    targets: dict[str, str]
    method: tuple[str, ...]
    timed: str = "fit"
    task: str = "binary"
    n_classes: int = 2
    n_features: int | None = None
    also_one_thread: bool = False
    table: str | None = None
    trials: bool = False
    references: tuple[str, ...] = ()

    def dataset_overrides(self) -> list[str]:
        """The dataset config a sweep would use for this data (the mapping picks the loss)."""
        if self.task == "regression":
            return ["dataset=synthetic_regression"]
        return ["dataset=synthetic_classification", f"dataset.task={self.task}",
                f"dataset.n_classes={self.n_classes}"]


GBT_ENGINES = (INHOUSE, "xgboost", "lightgbm", "sklearn")
GBT_REFERENCES = ("xgboost", "lightgbm")
RATIO = "ratio_to_fastest_reference"
CASES = {
    "gbt_depthwise": Case("rows", GBT_ENGINES,
                          {RATIO: "fit <= 0.6x the faster of XGBoost and LightGBM",
                           "memory_ratio_to_xgboost": "memory the fit adds <= 0.7x XGBoost's"},
                          GBT, references=GBT_REFERENCES),
    "gbt_lossguide": Case("rows", GBT_ENGINES,
                          {RATIO: "fit <= 0.7x the faster of XGBoost and LightGBM"},
                          GBT + LOSSGUIDE, references=GBT_REFERENCES),
    "gbt_depthwise_small": Case("small_rows", GBT_ENGINES,
                                {RATIO: "fit <= 0.8x the faster of XGBoost and LightGBM"}, GBT,
                                references=GBT_REFERENCES),
    "random_forest": Case("small_rows", (INHOUSE, "sklearn"),
                          {RATIO: "fit >= 10x faster than scikit-learn; predict and peak memory "
                                  "<= scikit-learn's"},
                          ("method=random_forest", "method.n_estimators=100"),
                          references=("sklearn",)),
    "adaboost": Case("small_rows", (INHOUSE, "sklearn"),
                     {RATIO: "fit >= 10x faster than scikit-learn"},
                     ("method=adaboost", "method.n_estimators=400"), references=("sklearn",)),
    "gbt_predict": Case("rows", (INHOUSE, "xgboost"), {RATIO: "predict <= 0.7x XGBoost"}, GBT,
                        "predict", references=("xgboost",)),
    "gbt_multiclass": Case("mid_rows", GBT_ENGINES,
                           {RATIO: "fit <= 0.7x the faster of XGBoost and LightGBM"}, GBT,
                           task="multiclass", n_classes=8, references=GBT_REFERENCES),
    "gbt_regression": Case("rows", GBT_ENGINES,
                           {RATIO: "fit <= 0.7x the faster of XGBoost and LightGBM"}, GBT,
                           task="regression", references=GBT_REFERENCES),
    "gbt_wide": Case("small_rows", GBT_ENGINES,
                     {RATIO: "fit <= 0.8x the faster of XGBoost and LightGBM"}, GBT,
                     n_features=500, references=GBT_REFERENCES),
    "gbt_threads": Case("rows", (INHOUSE,),
                        {"speedup_over_one_thread": "fit at 2 threads >= 1.7x faster than at 1"},
                        GBT, also_one_thread=True),
    "lab_overhead": Case("bundled", (INHOUSE,),
                         {"lab_overhead_seconds": "median over a sweep's jobs <= 0.3 s"},
                         ("dataset=breast_cancer", "method=random_forest"), "lab_overhead"),
    "cold_start": Case("bundled", (INHOUSE,),
                       {"cold_start_seconds": "every estimator's first fit with an empty numba "
                                              "cache, in total <= 15 s",
                        "other_checkout_seconds": "the same in another checkout of the same "
                                                  "sources at another path, the cache filled "
                                                  "by the first, <= 15 s"},
                       (), "cold_start"),
}
# Issue 43: the shapes studies run on (2,000-10,000 rows, tens of features, many categorical).
STUDY_ROWS = 3000  # the real-shaped table: 30 numeric and 40 integer-coded categorical columns
STUDY_NUMERIC, STUDY_CATEGORICAL, STUDY_LEVELS = 30, 40, (3, 25)
TUNED_ROWS = 10_000
FOREST_TARGET = {RATIO: "fit >= 2x faster than scikit-learn (ratio <= 0.5)"}
FOREST_ENGINES = (INHOUSE, "sklearn", "xgboost", "lightgbm")
STUDY_FEATURES = STUDY_NUMERIC + STUDY_CATEGORICAL
CASES |= {
    "gbt_2k": Case(2000, GBT_ENGINES,
                   {RATIO: "fit <= 0.7x the faster of XGBoost and LightGBM"}, GBT,
                   n_features=10, references=GBT_REFERENCES),
    "gbt_10k": Case(10_000, GBT_ENGINES,
                    {RATIO: "fit <= 0.7x the faster of XGBoost and LightGBM"},
                    (*GBT, "method.n_estimators=500"), n_features=20,
                    references=GBT_REFERENCES),
    **{f"{method}_table_{table}": Case(
        STUDY_ROWS, FOREST_ENGINES if method == "random_forest" else (INHOUSE, "sklearn"),
        FOREST_TARGET, (f"method={method}", "method.n_estimators=100"),
        n_features=STUDY_FEATURES, table=table, references=("sklearn",))
       for method in ("random_forest", "extra_trees") for table in ("codes", "native")},
    "adaboost_table": Case(STUDY_ROWS, (INHOUSE, "sklearn"),
                           {RATIO: "fit <= scikit-learn's (ratio <= 1)"},
                           ("method=adaboost", "method.n_estimators=100"),
                           n_features=STUDY_FEATURES, table="codes", references=("sklearn",)),
    "gbt_tuned": Case(TUNED_ROWS, (INHOUSE, "xgboost"),
                      {RATIO: "trials per minute >= 1.5x XGBoost's (time of the trials "
                              "<= 0.67x)"},
                      ("method=gbt",), n_features=STUDY_FEATURES, table="codes", trials=True,
                      references=("xgboost",)),
}
SWEEP_TIMED = ("lab_overhead", "cold_start")  # cases measured by a whole program, not workers
# argv: processes, the directory whose `ensembles` package it imports
COLD_START_PROGRAM = ("import json, sys; sys.path.insert(0, sys.argv[2]); "
                      "from ensembles.warm import compile_all; "
                      "print(json.dumps(compile_all(processes=int(sys.argv[1]))))")
def case_config(case: str, engine: str, threads: int):
    """The job config of one (case, engine): the case's method config on its task."""
    overrides = [*CASES[case].method, *CASES[case].dataset_overrides(), f"engine={engine}",
                 f"engine.n_jobs={threads}"]
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return compose("config", overrides=overrides)


def make_estimator(case: str, engine: str, threads: int, shape: tuple[int, int], cfg=None):
    """The estimator of one (case, engine) (or of `cfg`, a config of it), built for the engine
    by the sweeps' own mapping (experiments.engines); on the "native" table it splits the
    categorical columns natively, as dataset.categorical=native has each engine do
    (engines.categorical)."""
    cfg = cfg if cfg is not None else case_config(case, engine, threads)
    built = build(cfg, shape)
    if CASES[case].table == "native":
        built = with_native_categories(built, tuple(range(STUDY_NUMERIC, shape[1])), shape[1],
                                       cfg.method)
    return built.estimator


def study_table(n_rows: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A table shaped like the studies' (seeded): make_classification's STUDY_FEATURES
    columns, of which the last STUDY_CATEGORICAL are cut at their quantiles into 3-25 levels
    each and coded 0..K-1 in a shuffled order (so that a code's value carries no order)."""
    X, y = make_classification(n_samples=n_rows, n_features=STUDY_FEATURES, n_informative=20,
                               n_redundant=10, random_state=seed)
    rng = np.random.default_rng(seed)
    for column in range(STUDY_NUMERIC, STUDY_FEATURES):
        levels = int(rng.integers(STUDY_LEVELS[0], STUDY_LEVELS[1] + 1))
        cuts = np.quantile(X[:, column], np.linspace(0, 1, levels + 1)[1:-1])
        X[:, column] = rng.permutation(levels)[np.searchsorted(cuts, X[:, column])]
    return X, y


def sampled_configurations(cfg, n_trials: int, seed: int = 0) -> list[dict]:
    """n_trials configurations of the method's search space (conf/search_space), drawn by
    Optuna's random sampler seeded by `seed`: the same list for every engine."""
    space = distributions(cfg.search_space[cfg.method.name])
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=seed))
    configurations = []
    for _ in range(n_trials):
        trial = study.ask(space)
        configurations.append(dict(trial.params))
        study.tell(trial, 0.0)
    return configurations


def fit_trials(case: str, engine: str, threads: int, n_trials: int, X_train, y_train,
               X_valid, y_valid) -> float:
    """A tuned study's trials without the sampler's choices: each sampled configuration is
    built, fitted on (X_train, y_train) and scored on the validation rows, one after another
    (as experiments.tuning runs a trial in its worker); the mean validation accuracy."""
    cfg = case_config(case, engine, threads)
    scores = []
    for params in sampled_configurations(cfg, n_trials):
        model = make_estimator(case, engine, threads, X_train.shape, with_params(cfg, params))
        scores.append(np.mean(model.fit(X_train, y_train).predict(X_valid) == y_valid))
    return float(np.mean(scores))


def benchmark_data(spec: Case, n_rows: int, n_features: int):
    """The case's synthetic data (seeded: study_table, make_classification with the case's
    classes, or make_regression), 80% to fit, 20% to score."""
    informative = min(n_features // 2, 30)
    if spec.table is not None:
        X, y = study_table(n_rows)
    elif spec.task == "regression":
        X, y = make_regression(n_samples=n_rows, n_features=n_features,
                               n_informative=informative, noise=10.0, random_state=0)
    else:
        X, y = make_classification(n_samples=n_rows, n_features=n_features,
                                   n_informative=informative, n_classes=spec.n_classes,
                                   random_state=0)
    return train_test_split(X.astype(np.float64), y, test_size=0.2, random_state=0)


def median_fit_seconds(estimator, X, y, fit_seconds: float) -> tuple[float, int]:
    """(the median seconds of the fits of `estimator` on (X, y), how many were timed): it
    fits until the fits took fit_seconds in all or MAX_TIMED_FITS were made, at least once.
    A 25 ms fit timed once moved by a third from one worker to the next
    (docs/small_tables.md); a fit of more than fit_seconds is timed once. The estimator is
    left fitted."""
    times = []
    while not times or (sum(times) < fit_seconds and len(times) < MAX_TIMED_FITS):
        start = time.perf_counter()
        estimator.fit(X, y)
        times.append(time.perf_counter() - start)
    return float(np.median(times)), len(times)


def run_worker(case: str, engine: str, n_rows: int, n_features: int, threads: int,
               n_trials: int = 1, fit_seconds: float = 0.0) -> dict:
    """Fit (and predict) in this process; the measurement as a dict. The fit's time is
    median_fit_seconds' (`timed_fits`: how many); the peak memory is that of the fits, the
    data included (generating the data peaks higher, so the peak is reset after it).
    `score`: test accuracy, or R^2 for regression. A case of `trials` times fit_trials once
    instead (its score: their mean accuracy; no predict) and reports `trials_per_minute`."""
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
    rss_before_fit_mb = peak_rss_mb()  # after the reset, the peak is the current RSS
    if spec.trials:
        start = time.perf_counter()
        trials_score = fit_trials(case, engine, threads, n_trials, X_train, y_train, X_test,
                                  y_test)
        timed_seconds, timed_fits = time.perf_counter() - start, 1
    else:
        timed_seconds, timed_fits = median_fit_seconds(estimator, X_train, y_train,
                                                       fit_seconds)
    fit_peak_rss_mb = peak_rss_mb()
    measured = dict(case=case, engine=engine, first_call_seconds=first_call_seconds,
                    fit_seconds=timed_seconds, timed_fits=timed_fits,
                    fit_peak_rss_mb=fit_peak_rss_mb, rss_before_fit_mb=rss_before_fit_mb,
                    data_mb=data_mb, rows=n_rows, features=n_features)
    if spec.trials:
        return measured | {"score": trials_score, "trials": n_trials,
                           "trials_per_minute": 60 * n_trials / timed_seconds}
    X_predict = X_test
    if spec.timed == "predict":
        X_predict = np.tile(X_test, (int(np.ceil(n_rows / len(X_test))), 1))[:n_rows]
    start = time.perf_counter()
    predicted = estimator.predict(X_predict)
    predict_seconds = time.perf_counter() - start
    predicted = predicted[:len(y_test)]
    score = (r2_score(y_test, predicted) if spec.task == "regression"
             else float(np.mean(predicted == y_test)))  # fmt: skip
    return measured | dict(predict_seconds=predict_seconds, score=score,
                           predict_rows=len(X_predict))


def thread_environment(threads: int) -> dict[str, str]:
    """This process's environment with every thread pool (OpenMP, numba, MKL, OpenBLAS) set to
    `threads`, before a child process starts any of them."""
    count = str(threads)
    return {**os.environ, "OMP_NUM_THREADS": count, "NUMBA_NUM_THREADS": count,
            "MKL_NUM_THREADS": count, "OPENBLAS_NUM_THREADS": count}


def run_child(command: list[str], env: dict[str, str], name: str) -> str:
    """Run a command in the project root and return its stdout; RuntimeError with the last line
    of its stderr when it fails."""
    done = subprocess.run(command, cwd=PROJECT_ROOT, env=env, capture_output=True, text=True,
                          check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{name} failed: {done.stderr.strip().splitlines()[-1]}")
    return done.stdout


def measure(case: str, engine: str, n_rows: int, threads: int, args,
            cache_dir: str | None = None) -> dict:
    """run_worker in a child process with this thread count (and numba cache)."""
    env = thread_environment(threads)
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = cache_dir
    command = [sys.executable, "-m", "experiments.bench", "--worker", case, engine,
               "--rows", str(n_rows), "--features", str(args.features),
               "--threads", str(threads), "--trials", str(args.trials),
               "--fit-seconds", str(args.fit_seconds)]
    stdout = run_child(command, env, f"{case}/{engine}")
    return json.loads(stdout.strip().splitlines()[-1])


def thread_settings(spec: Case, engine: str, threads: int) -> list[tuple[str, int]]:
    """(engine label, thread count) of each run of an engine in a round: --threads, and one
    thread too for a case that asks for it."""
    settings = [(engine, threads)]
    if spec.also_one_thread:
        settings.append((f"{engine} ({ONE_THREAD})", 1))
    return settings


def measure_rounds(case: str, args, cold: bool) -> list[dict]:
    """A cold in-house run (if `cold`), then `repeats` interleaved rounds of the case's engines
    (and thread counts), each in a fresh worker."""
    spec = CASES[case]
    n_rows = (min(spec.rows, args.cap_rows or spec.rows) if isinstance(spec.rows, int)
              else {"rows": args.rows, "mid_rows": args.mid_rows,
                    "small_rows": args.small_rows}[spec.rows])  # fmt: skip
    rows = []
    if cold:
        with tempfile.TemporaryDirectory() as empty_cache:
            cold_run = measure(case, INHOUSE, n_rows, args.threads, args, cache_dir=empty_cache)
        rows.append({**cold_run, "engine": f"{INHOUSE} (cold)", "repeat": 0})
    for repeat in range(1, args.repeats + 1):
        for engine in spec.engines:
            for label, threads in thread_settings(spec, engine, args.threads):
                run = measure(case, engine, n_rows, threads, args)
                rows.append({**run, "engine": label, "repeat": repeat})
                print(json.dumps(rows[-1]), flush=True)
    return rows


def measure_lab_overhead(case: str, args) -> list[dict]:
    """Sweep --sweep-jobs seeds of the case's job (`python -m experiments.run -m`, Hydra's
    basic launcher: the jobs one after another in one process) into a throwaway sqlite store,
    with --threads threads; one row per job (job_overheads)."""
    spec = CASES[case]
    seeds = ",".join(str(seed) for seed in range(args.sweep_jobs))
    with tempfile.TemporaryDirectory() as store:
        uri = f"sqlite:///{Path(store) / 'mlflow.db'}"
        command = [sys.executable, "-m", "experiments.run", "-m", *spec.method,
                   f"engine={','.join(spec.engines)}", f"seed={seeds}",
                   f"mlflow.experiment_name={case}", f"hydra.sweep.dir={Path(store) / 'multirun'}"]
        run_child(command, {**thread_environment(args.threads), "MLFLOW_TRACKING_URI": uri}, case)
        jobs = job_overheads(MlflowClient(uri), case)
    rows = [{"case": case, **job, "repeat": index} for index, job in enumerate(jobs, start=1)]
    for row in rows:
        print(json.dumps(row), flush=True)
    return rows


def measure_cold_start(case: str, args) -> list[dict]:
    """`python -m ensembles.warm`'s compilation against an empty numba cache (every estimator,
    task and GBT loss; the two tree families in two processes, as `make` runs it), then the
    same in one process from a copy of the package at another path (a fresh clone, a node's
    checkout) against the cache the first filled, in seconds."""
    with tempfile.TemporaryDirectory() as empty_cache, tempfile.TemporaryDirectory() as copy:
        env = {**thread_environment(args.threads), "NUMBA_CACHE_DIR": empty_cache}
        shutil.copytree(PROJECT_ROOT / "ensembles", Path(copy) / "ensembles",
                        ignore=shutil.ignore_patterns("__pycache__"))
        seconds = {}
        for column, root, processes in (("cold_start_seconds", PROJECT_ROOT, min(2, args.threads)),
                                        ("other_checkout_seconds", copy, 1)):
            stdout = run_child([sys.executable, "-c", COLD_START_PROGRAM, str(processes),
                                str(root)], env, case)
            seconds[column] = json.loads(stdout.strip().splitlines()[-1])
    row = {"case": case, "engine": INHOUSE, "repeat": 1, **seconds}
    print(json.dumps(row), flush=True)
    return [row]


def job_overheads(client: MlflowClient, experiment_name: str) -> list[dict]:
    """Per job of the experiment's one sweep, in order: `job_wall_seconds`, from the end of the
    previous job's run (the start of the sweep's run, for the first) to the end of its own, so
    Hydra's set-up of the job and what it does before its run starts (run_key, resume check)
    count; `fit_seconds` and `predict_seconds`, summed over its splits; `lab_overhead_seconds`
    = wall - fit - predict. Left out, once per sweep: the process start-up (imports), composing
    and checking every job's config, creating the store and the sweep's run, closing it. The
    first in-house job also loads (or compiles) the engine's code, once per process, and the
    first job of each batch of 8 carries Hydra's check of the batch (composing its 8 configs):
    the median leaves both out."""
    experiment = client.get_experiment_by_name(experiment_name)
    runs = sorted(client.search_runs([experiment.experiment_id]),
                  key=lambda run: run.info.start_time)
    [sweep] = [run for run in runs if run.data.tags.get("status") == "sweep"]
    previous_end = sweep.info.start_time
    jobs = []
    for run in runs:
        if run is sweep:
            continue
        wall = (run.info.end_time - previous_end) / 1000
        previous_end = run.info.end_time
        fit, predict = (sum(metric.value for metric in
                            client.get_metric_history(run.info.run_id, f"split_{name}_seconds"))
                        for name in ("fit", "predict"))
        jobs.append(dict(engine=run.data.tags["engine"], job_wall_seconds=wall, fit_seconds=fit,
                         predict_seconds=predict, lab_overhead_seconds=wall - fit - predict))
    return jobs


def run_benchmark(args) -> pd.DataFrame:
    """Every case: a sweep for lab_overhead, the warm-up program for cold_start, else rounds
    of workers, with a cold in-house run for the first such case (unless --no-cold)."""
    worker_cases = [case for case in args.cases if CASES[case].timed not in SWEEP_TIMED]
    rows = []
    for case in args.cases:
        if CASES[case].timed == "lab_overhead":
            rows += measure_lab_overhead(case, args)
        elif CASES[case].timed == "cold_start":
            rows += measure_cold_start(case, args)
        else:
            rows += measure_rounds(case, args, cold=case == worker_cases[0] and not args.no_cold)
    return pd.DataFrame(rows)


MEDIANS = ["first_call_seconds", "fit_seconds", "predict_seconds", "fit_peak_rss_mb", "data_mb",
           "fit_memory_over_data_mb", "fit_added_mb", "score", "job_wall_seconds",
           "lab_overhead_seconds", "cold_start_seconds", "other_checkout_seconds",
           "trials_per_minute", "timed_fits",
           "rows", "features"]


def summarize(runs: pd.DataFrame) -> pd.DataFrame:
    """Medians per (case, engine); ours / the fastest reference of the issue's target, ours /
    XGBoost's fit memory over the data, and the speedup over one thread."""
    runs = runs.reindex(columns=["case", "engine", "rss_before_fit_mb", *MEDIANS])
    runs["fit_memory_over_data_mb"] = runs.fit_peak_rss_mb - runs.data_mb
    runs["fit_added_mb"] = runs.fit_peak_rss_mb - runs.rss_before_fit_mb
    groups = runs.groupby(["case", "engine"], sort=False)
    medians = groups[MEDIANS].median().reset_index()
    medians["repeats"] = groups.size().values
    medians[RATIO] = ratios_to_fastest_reference(medians)
    xgboost_memory = partner_values(
        medians, "fit_added_mb",
        lambda engine: "xgboost" if engine.startswith(INHOUSE) else None)
    medians["memory_ratio_to_xgboost"] = medians.fit_added_mb / xgboost_memory
    one_thread_fit = partner_values(medians, "fit_seconds",
                                    lambda engine: f"{engine} ({ONE_THREAD})")
    medians["speedup_over_one_thread"] = one_thread_fit / medians.fit_seconds
    medians["target"] = ["; ".join(CASES[case].targets.values()) for case in medians.case]
    return medians


def ratios_to_fastest_reference(medians: pd.DataFrame) -> list[float]:
    """Per in-house row, its time of the case's timed step / the fastest reference's (NaN for
    the references and for a case without one)."""
    ratios = []
    for _, row in medians.iterrows():
        timed = f"{CASES[row.case].timed}_seconds"
        references = medians[(medians.case == row.case)
                             & medians.engine.isin(CASES[row.case].references)]
        fastest = references[timed].min() if len(references) else np.nan
        ratios.append(row[timed] / fastest if row.engine.startswith(INHOUSE) else np.nan)
    return ratios


def partner_values(medians: pd.DataFrame, column: str,
                   partner_of: Callable[[str], str | None]) -> pd.Series:
    """Per row, `column` of the row of the same case whose engine is partner_of(its engine);
    NaN where there is none."""
    values = medians.set_index(["case", "engine"])[column]
    return pd.Series([values.get((case, partner_of(engine)), np.nan)
                      for case, engine in zip(medians.case, medians.engine, strict=True)],
                     index=medians.index)  # fmt: skip


def targets_table(summary: pd.DataFrame) -> pd.DataFrame:
    """Each target of the issue beside the value it bounds: the summary column that it names,
    in the case's in-house row."""
    ours = summary[summary.engine == INHOUSE].set_index("case")
    return pd.DataFrame([dict(case=case, target=text, measure=column,
                              measured=ours.loc[case, column])
                         for case in ours.index
                         for column, text in CASES[case].targets.items()])  # fmt: skip


def write_results(summary: pd.DataFrame, out_dir: Path, args) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    summary.insert(0, "cpu", cpu_model())
    summary.to_csv(out_dir / "bench.csv", index=False)
    header = (f"# Benchmark\n\nCPU: {cpu_model()}. Medians of {args.repeats} interleaved "
              "runs (workers) per engine, each worker's fit time the median of its "
              f"`timed_fits` fits (as many as fill {args.fit_seconds:g} s, at most "
              f"{MAX_TIMED_FITS}), {args.threads} threads, {args.features} features (500 for "
              f"gbt_wide), {args.rows} rows ({args.mid_rows} for gbt_multiclass, "
              f"{args.small_rows} for the small cases); `score`: test accuracy, R^2 for "
              "regression; ratio = ours / the fastest reference "
              "of the target (time of the timed step). `first_call_seconds`: a first fit "
              f"and predict on {WARM_UP_ROWS} rows in the worker, before the timed ones "
              "(loading the engine's code); `inhouse (cold)` is a worker with an empty numba "
              "cache, whose first call compiles. `fit_memory_over_data_mb`: fit peak RSS - "
              "data; `fit_added_mb`: fit peak RSS - RSS just before the fit (data, "
              "interpreter and libraries resident), `memory_ratio_to_xgboost`: ours / "
              "XGBoost's on it; "
              f"`speedup_over_one_thread`: fit at `{INHOUSE} ({ONE_THREAD})` / fit at "
              f"{args.threads} threads. `lab_overhead`: a sweep of {args.sweep_jobs} jobs "
              "(`repeats`), medians over them of `job_wall_seconds` (from the end of the "
              "previous job's MLflow run to the end of its own) and of "
              "`lab_overhead_seconds` = wall - fit - predict; the sweep's process start-up "
              "is left out. `cold_start_seconds`: `python -m ensembles.warm` against an "
              "empty numba cache; `other_checkout_seconds`: the same from a copy of the "
              "package at another path, one process, against the cache the first filled. "
              "The shapes studies run on (issue 43): `gbt_2k` (2,000 x "
              "10, 100 rounds), `gbt_10k` (10,000 x 20, 500 rounds), a real-shaped table of "
              f"{STUDY_ROWS} rows (`*_table_*`: {STUDY_NUMERIC} numeric and "
              f"{STUDY_CATEGORICAL} categorical columns of {STUDY_LEVELS[0]}-"
              f"{STUDY_LEVELS[1]} levels, as ordinal `codes` or split `native`ly where the "
              "engine can), and `gbt_tuned`: a tuned study's trials on that table at "
              f"{TUNED_ROWS} rows, {args.trials} configurations of the GBT search space "
              "(the same for both engines) fitted and scored one after another, "
              "`trials_per_minute`; `rows` says the rows each case ran.\n\n")
    tables = (f"## Targets\n\n{targets_table(summary).to_markdown(index=False, floatfmt='.3g')}"
              f"\n\n## Medians\n\n{summary.to_markdown(index=False, floatfmt='.3g')}\n")
    (out_dir / "bench.md").write_text(header + tables)


def positive_int(text: str) -> int:
    """An argparse type: a whole number >= 1 (a count of rows, threads, repeats or trials)."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1, got {text}")
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.bench")
    parser.add_argument("--rows", type=positive_int, default=1_000_000)
    parser.add_argument("--mid-rows", type=positive_int, default=300_000)
    parser.add_argument("--small-rows", type=positive_int, default=100_000)
    parser.add_argument("--features", type=positive_int, default=28)
    parser.add_argument("--threads", type=positive_int, default=2)
    parser.add_argument("--repeats", type=positive_int, default=3)
    parser.add_argument("--sweep-jobs", type=positive_int, default=10,
                        help="jobs of lab_overhead's sweep")
    parser.add_argument("--cap-rows", type=positive_int, default=None,
                        help="at most this many rows in the cases of their own size")
    parser.add_argument("--trials", type=positive_int, default=20,
                        help="configurations of gbt_tuned")
    parser.add_argument("--fit-seconds", type=float, default=1.0,
                        help="a worker times fits until they took this long "
                             f"(at most {MAX_TIMED_FITS}, at least one) and reports their median")
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    parser.add_argument("--out", type=Path, default=REPORTS_OUT)
    parser.add_argument("--no-cold", action="store_true",
                        help="skip the empty-cache runs (the cold worker and cold_start)")
    parser.add_argument("--worker", nargs=2, metavar=("CASE", "ENGINE"))
    args = parser.parse_args(argv)
    if args.no_cold:
        args.cases = [case for case in args.cases if case != "cold_start"]
        if not args.cases:
            parser.error("--no-cold leaves no case to run")
    if args.worker:
        print(json.dumps(run_worker(*args.worker, args.rows, args.features, args.threads,
                                    args.trials, args.fit_seconds)))
        return 0
    summary = summarize(run_benchmark(args))
    write_results(summary, args.out, args)
    print((args.out / "bench.md").read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
