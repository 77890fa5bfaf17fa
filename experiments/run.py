"""One job: config -> resume check -> data -> splits -> estimator -> fit and score -> MLflow.

python -m experiments.run dataset=wine engine=sklearn      # one job
python -m experiments.run -m +sweep=default                # a sweep
"""

import logging

import hydra
import mlflow
from omegaconf import DictConfig

from experiments import tracking
from experiments.configs import one_line_config_errors, register_configs
from experiments.datasets import load_dataset
from experiments.engines import SkippedJob, build_estimator
from experiments.evaluation import fit_and_score, peak_rss_mb, reset_peak_rss, splits

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
            scores = [
                fit_and_score(estimator, task, X[train], y[train], X[test], y[test])
                for train, test in splits(cfg.eval, task, X, y, cfg.seed)
            ]
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
