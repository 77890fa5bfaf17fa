"""One job: config -> resume check -> data -> estimator (and its in-house twin for a parity
check) -> fit and score on each split -> MLflow.

python -m experiments.run dataset=wine engine=sklearn      # one job
python -m experiments.run -m +sweep=default                # a sweep
"""

import logging

import hydra
import mlflow
from omegaconf import DictConfig
from threadpoolctl import threadpool_limits

from experiments import tracking
from experiments.configs import one_line_config_errors, register_configs
from experiments.datasets import load_dataset
from experiments.engines import SkippedJob, approximation, build_estimator
from experiments.evaluation import evaluate, peak_rss_mb, primary_metric, reset_peak_rss, splits

log = logging.getLogger(__name__)
register_configs()


def run_job(cfg: DictConfig) -> str:
    """Run one job as one MLflow run; return its status: ok, skipped, failed (or resumed, when
    an ok run of the same run_key exists and nothing is logged). It never raises once the run
    has started, so a sweep goes on past a failed job."""
    experiment_id = tracking.open_experiment(cfg.mlflow)
    key = tracking.run_key(cfg)
    if cfg.resume and tracking.has_ok_run(experiment_id, key):
        log.info("resumed: an ok run of run_key %s exists", key)
        return "resumed"
    with mlflow.start_run(experiment_id=experiment_id):
        try:
            reset_peak_rss()
            tracking.log_job(cfg, key)
            task = cfg.dataset.task
            X, y = load_dataset(cfg.dataset)
            estimator = build_estimator(cfg, X.shape)
            twin = None
            if cfg.eval.parity and cfg.engine.name != "inhouse":
                twin = build_estimator(cfg, X.shape, engine="inhouse")
            tracking.log_estimator(estimator, approximation(cfg))
            folds = splits(cfg.eval, task, X, y, cfg.seed)
            # OpenMP code without an n_jobs (HistGradientBoosting) gets engine.n_jobs threads too
            threads = cfg.engine.n_jobs if cfg.engine.n_jobs > 0 else None  # -1: every core
            with threadpool_limits(limits=threads, user_api="openmp"):
                scores, curve = evaluate(estimator, twin, task, X, y, folds, cfg.eval.curve_every)
            if curve:
                tracking.log_curve(f"curve_{primary_metric(task)}", curve)
            means = tracking.log_scores(scores, peak_rss_mb())
        except SkippedJob as reason:
            log.warning("skipped: %s", reason)
            return tracking.mark("skipped", skip_reason=str(reason))
        except Exception as error:
            log.error("failed: %s", error)
            return tracking.mark_failed(error)
        log.info("ok: %s", ", ".join(f"{name}={value:.4g}" for name, value in means.items()))
        return tracking.mark("ok")


@hydra.main(version_base="1.3", config_path="../conf", config_name="config")
def hydra_job(cfg: DictConfig) -> str:
    return run_job(cfg)


def main() -> None:
    with one_line_config_errors():
        hydra_job()


if __name__ == "__main__":
    main()
