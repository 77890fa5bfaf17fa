"""The lab's Hydra callback: before a sweep, check every job's config and create the store
once; after a sweep or a single job, exit non-zero when a job failed."""

import itertools
import os
import sys
import uuid
from typing import Any

import mlflow
from hydra.core.global_hydra import GlobalHydra
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.utils import JobReturn
from hydra.errors import HydraException
from hydra.experimental.callback import Callback
from omegaconf import DictConfig

from experiments.config_errors import exit_if_invalid
from experiments.store_retry import retry_when_busy
from experiments.tracking import SWEEP_ID_ENV, open_experiment


def sweep_job_configs(config: DictConfig) -> list[DictConfig]:
    """The composed config of every job of a basic sweep (the cartesian product of its sweep
    overrides): a sweep with a job that does not compose fails here, before anything is
    written."""
    loader = GlobalHydra.instance().config_loader()
    params = config.hydra.sweeper.get("params") or {}
    arguments = [f"{key}={value}" for key, value in params.items()]
    arguments += list(config.hydra.overrides.task)
    overrides = OverridesParser.create(config_loader=loader).parse_overrides(arguments)
    choices = [
        [f"{override.get_key_element()}={value}" for value in override.sweep_string_iterator()]
        if override.is_sweep_override()
        else [override.input_line]
        for override in overrides
    ]
    return [loader.load_sweep_config(master_config=config, sweep_overrides=list(job))
            for job in itertools.product(*choices)]


class LabCallback(Callback):
    """Create the store and the experiment once in the parent before any job (workers racing on
    a new sqlite store lose runs); exit non-zero if any job failed."""

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        try:
            jobs = sweep_job_configs(config)
        except HydraException:
            return  # the sweeper reports the composition error itself, before any job runs
        for job in jobs:
            exit_if_invalid(job)  # Hydra turns a callback's exception into a warning
        self.n_jobs = len(jobs)
        self.sweep_id = uuid.uuid4().hex
        os.environ[SWEEP_ID_ENV] = self.sweep_id
        self.experiment_id = open_experiment(config.mlflow)

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        failed = retry_when_busy(mlflow.search_runs)(
            experiment_ids=[self.experiment_id],
            filter_string=f"tags.sweep_id = '{self.sweep_id}' and tags.status = 'failed'",
            output_format="list",
        )
        if failed:
            sys.exit(f"error: {len(failed)} of {self.n_jobs} jobs failed")

    def on_job_end(self, config: DictConfig, job_return: JobReturn, **kwargs: Any) -> None:
        self.job_status = job_return.return_value if job_return.status.name == "COMPLETED" else None

    def on_run_end(self, config: DictConfig, **kwargs: Any) -> None:
        if getattr(self, "job_status", None) == "failed":
            sys.exit(1)  # the job printed its cause on stderr
