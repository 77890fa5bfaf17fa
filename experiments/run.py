"""One job: config -> resume check -> data -> estimator (and its in-house twin for a parity
check) -> fit and score on each split -> MLflow.

python -m experiments.run dataset=wine engine=sklearn      # one job
python -m experiments.run -m +sweep=default                # a sweep
"""

import logging
import os
import sys
from functools import partial

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import DictConfig
from sklearn.base import BaseEstimator

from ensembles import warm
from experiments.bias_variance import evaluate_bias_variance
from experiments.config_errors import (
    causes,
    exit_if_invalid,
    exit_with,
    one_line_config_errors,
    uncached_skip_reason,
)
from experiments.configs import EvalKind, register_configs
from experiments.data.datasets import describe_dataset, load_dataset, suite_dataset_megabytes
from experiments.engines import (
    SkippedJob,
    build,
    build_estimator,
    check_takes_missing_values,
    inhouse_class_name,
    openmp_threads,
)
from experiments.evaluation import cap_training_rows, evaluate, primary_metric, splits
from experiments.memory import available_mb, peak_rss_mb, reset_peak_rss
from experiments.store import tracking
from experiments.store.claims import job_claim
from experiments.store.journal import journal_file, record_job, replay
from experiments.store.liveness import fail_orphans
from experiments.store.tracking import job_name
from experiments.store.uri import CredentialsInURI, refuse_credentials, tracking_uri
from experiments.tuning.search import Tuner

log = logging.getLogger(__name__)
register_configs()


def run_job(cfg: DictConfig) -> str:
    """Run one job as one MLflow run (what `python -m experiments.run` does for each job).

    It never raises but for Ctrl-C, so a sweep goes on past a failed job: an outcome the store
    does not take (unreachable past its retries) is journaled (experiments.store.journal) and the
    job counts as failed.

    Parameters
    ----------
    cfg : DictConfig
        The job config (conf/config.yaml and its groups, composed by Hydra).

    Returns
    -------
    str
        ok, skipped or failed; resumed when an ok or skipped run of the job's run_key exists or
        another process holds its claim (nothing is logged then).
    """
    sweep = os.environ.get(tracking.SWEEP_RUN_ENV)
    journal = journal_file(cfg.mlflow.journal_dir, sweep)
    uri = tracking_uri(cfg.mlflow.tracking_uri)
    key = tracking.run_key(cfg)
    try:
        status = claim_and_run(cfg, key, sweep)
    except Exception as error:
        interrupt = user_interrupt(error)
        if interrupt is not None:
            raise interrupt from None
        cause = f"the store did not take the job's outcome: {tracking.error_line(error)}"
        print(f"error: {job_name(cfg)} failed: {cause}; journaled in {journal}", file=sys.stderr)
        record_job(journal, uri, key, "failed", tracking.leave_active_run(), error=cause)
        return "failed"
    if sweep:  # the sweep's summary counts from its journal if the store is gone at its end
        record_job(journal, uri, key, status, None)
    return status


def claim_and_run(cfg: DictConfig, key: str, sweep: str | None) -> str:
    """Fail the job's orphaned runs; under resume, claim the job (experiments.store.claims) and run
    it unless another process holds it or a done run of its run_key exists."""
    experiment_id = tracking.open_experiment(cfg.mlflow)
    fail_orphans(experiment_id, key, sweep)
    if not cfg.resume:
        return run_and_log(cfg, experiment_id, key, None)
    with job_claim(experiment_id, key, sweep) as (claim, holder):
        if claim is None:
            log.info("%s resumed (claimed by %s)", job_name(cfg), holder)
            return "resumed"
        done = tracking.done_status(experiment_id, key)
        if done is not None:
            log.info("%s resumed: run_key %s already has a run of status %s", job_name(cfg), key,
                     done)  # fmt: skip
            return "resumed"
        return run_and_log(cfg, experiment_id, key, claim)


def run_and_log(cfg: DictConfig, experiment_id: str, key: str, claim: str | None) -> str:
    """The job's run: data, estimator, fit and score on each split, everything logged; a job
    that fails is marked failed with its error (the sweep goes on)."""
    with tracking.job_run(experiment_id, job_name(cfg), key, claim):
        try:
            if cfg.engine.name == "inhouse" or cfg.eval.parity:
                # not in the job's timed fit and peak memory; its own estimator's kernels only
                warm.compile_once(inhouse_class_name(cfg))
            reset_peak_rss()
            tracking.log_job(cfg)
            task = cfg.dataset.task
            check_cached(cfg)
            check_fits_in_memory(cfg.dataset)
            X, y = load_dataset(cfg.dataset)
            tracking.log_dataset(cfg.dataset, X, y, describe_dataset(cfg.dataset, X, y))
            estimator, approximation = build(cfg, X.shape)
            check_takes_missing_values(estimator, X)
            twin = None
            if cfg.eval.parity and cfg.engine.name != "inhouse":
                twin = build_estimator(cfg, X.shape, engine="inhouse")
            tracking.log_estimator(estimator, approximation)
            show_progress(estimator)
            tuner = None
            if cfg.tune.name != "none":
                tuner = Tuner(cfg, X.shape, partial(tracking.log_trials, job_name(cfg)))
            folds = splits(cfg.eval, task, X, y, cfg.seed)
            cap = cfg.dataset.get("max_train_rows")
            if cap is not None:
                tracking.tag_row_cap(cap)
                folds = cap_training_rows(folds, cap, cfg.seed)
            with openmp_threads(cfg):
                if cfg.eval.kind is EvalKind.bias_variance:
                    scores, decomposition = evaluate_bias_variance(
                        estimator, task, X, y, next(folds), cfg.eval.n_bootstrap, cfg.seed
                    )
                    curve, tables = {}, {}
                else:
                    scores, curve, tables = evaluate(
                        estimator, twin, task, X, y, folds, cfg.eval.curve_every, tuner
                    )
                    decomposition = {}
            if curve:
                tracking.log_curve(f"curve_{primary_metric(task)}", curve)
            tracking.log_tables(tables)
            if tuner is not None:
                tracking.log_best_params(tuner.best_params)
            if decomposition:
                tracking.log_metrics(decomposition)
            means = tracking.log_scores(scores, peak_rss_mb())
        except SkippedJob as reason:
            log.warning("%s skipped: %s", job_name(cfg), reason)
            return tracking.mark("skipped", skip_reason=str(reason))
        except Exception as error:
            interrupt = user_interrupt(error)
            if interrupt is not None:
                raise interrupt from None
            log.error("%s failed: %s", job_name(cfg), error)
            cause = tracking.error_line(error)
            print(f"error: {job_name(cfg)} failed: {cause}; its run holds the error tag and "
                  "traceback.txt", file=sys.stderr)  # Hydra logs to stdout
            return tracking.mark_failed(error)
        key_metrics = [primary_metric(task), "fit_seconds", "n_trees"]
        shown = [f"{name}={means[name]:.4g}" for name in key_metrics if name in means]
        log.info("%s ok: %s", job_name(cfg), ", ".join(shown))
        return tracking.mark("ok")


def user_interrupt(error: BaseException) -> KeyboardInterrupt | None:
    """The KeyboardInterrupt behind `error`, if any: Ctrl-C during a numba kernel surfaces as
    SystemError("... returned a result with an exception set"), with the interrupt as its cause
    or, when it came while the error was handled, as its context (a clean-clone CI run met a
    SystemError whose cause was not the interrupt): the job was interrupted, not failed."""
    return next((link for link in causes(error) if isinstance(link, KeyboardInterrupt)), None)


def check_cached(cfg: DictConfig) -> None:
    """SkippedJob for a suite's dataset missing from the cache under suite.uncached=skip (under
    fail, the config check stops before any run)."""
    reason = uncached_skip_reason(cfg)
    if reason is not None:
        raise SkippedJob(reason)


def check_fits_in_memory(dataset: DictConfig) -> None:
    """SkippedJob when a suite's dataset needs more memory than the machine has available."""
    need = suite_dataset_megabytes(dataset)
    if need is not None and need[0] > available_mb():
        raise SkippedJob(f"dataset {dataset.name} ({need[1]}) needs about {need[0]:.3g} MB, "
                         f"{available_mb():.3g} MB available")


def show_progress(estimator: BaseEstimator) -> None:
    """Progress bars over the rounds or trees of an in-house estimator in a single job (a sweep
    prints one line per job instead); tqdm leaves them out when stderr is not a terminal."""
    single_job = HydraConfig.initialized() and HydraConfig.get().mode is RunMode.RUN
    if single_job and type(estimator).__module__.startswith("ensembles."):
        estimator.set_params(verbose=1)


@hydra.main(version_base="1.3", config_path="../conf", config_name="config")
def hydra_job(cfg: DictConfig) -> str:
    if HydraConfig.get().mode is not RunMode.MULTIRUN:
        exit_if_invalid(cfg)  # a sweep's jobs are checked together before the first one runs
        replay_journals(cfg.mlflow)  # a sweep replays them at its start
    return run_job(cfg)


def replay_journals(settings: DictConfig) -> None:
    """Write what the store did not take earlier (experiments.store.journal); with the store still
    unreachable, the job journals its own outcome as well."""
    try:
        replay(settings.journal_dir, tracking_uri(settings.tracking_uri))
    except Exception as error:  # noqa: BLE001
        log.warning("the journal stays for the next job or sweep: %s", tracking.error_line(error))


def main() -> None:
    exit_if_credentials_in_uri(sys.argv[1:])
    with one_line_config_errors():
        hydra_job()


def exit_if_credentials_in_uri(arguments: list[str]) -> None:
    """One line and exit 2 when MLFLOW_TRACKING_URI or a `mlflow.tracking_uri=` override holds
    credentials: before Hydra writes the overrides into its output files."""
    uris = [os.environ.get("MLFLOW_TRACKING_URI") or ""]
    uris += [argument.split("=", 1)[1] for argument in arguments
             if argument.lstrip("+~").startswith("mlflow.tracking_uri=")]  # fmt: skip
    for uri in filter(None, uris):
        try:
            refuse_credentials(uri)
        except CredentialsInURI as error:
            exit_with(str(error))


if __name__ == "__main__":
    main()
