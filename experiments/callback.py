"""The lab's Hydra callback: before a sweep, check every job's config and create the store
once; after a sweep or a single job, exit non-zero when a job failed."""

import os
import sys
import time
from contextlib import ExitStack
from typing import Any

from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
from hydra.core.global_hydra import GlobalHydra
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.utils import JobReturn
from hydra.errors import HydraException
from hydra.experimental.callback import Callback
from omegaconf import DictConfig
from omegaconf.errors import OmegaConfBaseException
from tqdm import tqdm

from experiments import ray_cluster
from experiments.config_errors import (
    describe_config_error,
    exit_if_files_share_a_name,
    exit_if_invalid,
    exit_if_uncached,
    exit_with,
)
from experiments.store import journal
from experiments.store.liveness import beat_run, fail_orphans, heartbeat
from experiments.store.sweep_record import close_sweep_run, job_counts, open_sweep_run, summary_line
from experiments.store.tracking import SWEEP_RUN_ENV, error_line, open_experiment
from experiments.store.uri import CredentialsInURI, tracking_uri

COMPOSED: dict[tuple[str, ...], DictConfig] = {}  # the sweep's job configs, by their overrides
SWEEP_HEARTBEAT = ExitStack()  # the sweep run's heartbeat (launchers pickle the callback)


def sweep_job_configs(config: DictConfig) -> list[DictConfig]:
    """The composed config of every job of a basic sweep, in the sweeper's order."""
    return list(sweep_jobs(config).values())


def sweep_jobs(config: DictConfig) -> dict[tuple[str, ...], DictConfig]:
    """Each job's overrides (`sweep_overrides`) -> its composed config: a sweep with a job that
    does not compose fails here, before anything is written."""
    loader = GlobalHydra.instance().config_loader()
    return {tuple(job): loader.load_sweep_config(master_config=config, sweep_overrides=job)
            for job in progress(sweep_overrides(config), "compose")}


def sweep_overrides(config: DictConfig) -> list[list[str]]:
    """Each job's overrides, split as Hydra's BasicSweeper splits the sweep (the cartesian
    product of its sweep overrides; a command-line override replaces the preset's sweep of the
    same key)."""
    loader = GlobalHydra.instance().config_loader()
    params = config.hydra.sweeper.get("params") or {}
    arguments = [f"{key}={value}" for key, value in params.items()]
    arguments += list(config.hydra.overrides.task)
    overrides = OverridesParser.create(config_loader=loader).parse_overrides(arguments)
    [jobs] = BasicSweeper.split_arguments(overrides, None)
    return jobs


def take_composed(overrides: list[str]) -> DictConfig | None:
    """The config the sweep's check composed for these overrides, handed out once (the lab's
    sweeper gives it to the launcher instead of composing the job again)."""
    return COMPOSED.pop(tuple(overrides), None)


def progress(items: list, step: str) -> tqdm:
    """A progress bar over the sweep's jobs on a terminal, cleared when done (nothing in a log
    file, so that a bad sweep's stderr is its one error line)."""
    return tqdm(items, desc=f"{step} job configs", unit="job", disable=None, leave=False)


class LabCallback(Callback):
    """Create the store, the experiment and the sweep's run once in the parent before any job
    (workers racing on a new sqlite store lose runs), after replaying what earlier sweeps
    journaled and failing the runs whose process is gone; after the sweep, print its summary
    line and exit non-zero if any job failed."""

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        try:  # one line and exit 2 before anything is written: Hydra turns a callback's
            # exception into a warning and goes on
            uri = tracking_uri(config.mlflow.tracking_uri)
            composed = sweep_jobs(config)
            jobs = list(composed.values())
            exit_if_uncached(jobs)  # every dataset missing from the cache in one line
            for job in progress(jobs, "check"):
                exit_if_invalid(job)
            exit_if_files_share_a_name(jobs)
        except (HydraException, OmegaConfBaseException) as error:
            exit_with(describe_config_error(error))
        except CredentialsInURI as error:
            exit_with(str(error))
        except Exception as error:  # noqa: BLE001 - a fault of the check itself, named
            exit_with(f"checking the sweep failed: {type(error).__name__}: {error}")
        COMPOSED.update(composed)
        self.n_jobs = len(jobs)
        self.start = time.monotonic()
        self.uri = uri
        try:
            self.experiment_id = open_experiment(config.mlflow)
            replayed = journal.replay(config.mlflow.journal_dir, uri)
            self.sweep_run_id = open_sweep_run(self.experiment_id, config, self.n_jobs)
            orphans = fail_orphans(self.experiment_id, None, self.sweep_run_id)
        except Exception as error:  # noqa: BLE001 - nothing ran yet: one line, exit 2
            exit_with(f"the store {uri} did not open the sweep: {error_line(error)}")
        if replayed or orphans:
            print(f"sweep: {replayed} journaled outcomes written to the store, {orphans} runs "
                  "of dead processes failed", file=sys.stderr)  # fmt: skip
        SWEEP_HEARTBEAT.enter_context(heartbeat(beat_run(self.sweep_run_id)))
        self.journal = journal.journal_file(config.mlflow.journal_dir, self.sweep_run_id)
        os.environ[SWEEP_RUN_ENV] = self.sweep_run_id  # the jobs' parent, in every launcher
        os.environ[journal.JOURNAL_ENV] = str(self.journal)
        if ray_cluster.launches_on_ray(config):
            ray_cluster.connect(config)  # Ray's workers get the environment from the sweep

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        seconds = time.monotonic() - self.start
        SWEEP_HEARTBEAT.close()
        note = ""
        journaled = journal.job_counts(self.journal, self.n_jobs)
        try:  # the outcomes a passing outage kept from the store first
            journal.replay(config.mlflow.journal_dir, self.uri)
            counts = job_counts(self.experiment_id, self.sweep_run_id, self.n_jobs)
            close_sweep_run(self.sweep_run_id, counts, seconds)
        except Exception as error:  # noqa: BLE001 - the store is unreachable: the journal counts
            counts = journaled
            journal.record_sweep_end(self.journal, self.uri, self.sweep_run_id, counts, seconds)
            note = (f" (the store is unreachable: {type(error).__name__}; counted from the "
                    f"journal {self.journal}, which the next sweep writes to the store)")
        if not journal.unrecorded(self.journal):
            self.journal.unlink(missing_ok=True)
        print(summary_line(counts, self.n_jobs, seconds) + note, file=sys.stderr)
        if counts["failed"]:
            sys.exit(f"error: {counts['failed']} of {self.n_jobs} jobs failed")

    def on_job_end(self, config: DictConfig, job_return: JobReturn, **kwargs: Any) -> None:
        self.job_status = job_return.return_value if job_return.status.name == "COMPLETED" else None

    def on_run_end(self, config: DictConfig, **kwargs: Any) -> None:
        if getattr(self, "job_status", None) == "failed":
            sys.exit(1)  # the job printed its cause on stderr
