"""The lab's Hydra sweeper (hydra/sweeper=lab, the default of conf/config.yaml): Hydra's basic
sweeper whose jobs are composed once: by the lab's callback, which checks every job before the
sweep starts (experiments.callback), or else by its check of a batch, for the launcher too.

Hydra's basic sweeper composes every job of a batch to check it, throws the configs away, and
the launcher composes each job again to run it: at 0.18 s a composition, that was a third of
the lab's time per job (make bench, case lab_overhead). Here the check keeps the batch's
configs and the launcher's loader hands each out once (BatchComposingLoader); a launcher that
composes in another process, or a job that is not in the batch, composes as before. Hydra
loads sweepers only from the hydra_plugins namespace, hence this package.

A joblib worker that dies (SIGKILL, the out-of-memory killer) breaks loky's pool: joblib raises
TerminatedWorkerError for the whole batch and loky kills the batch's other workers. The sweeper's
launcher (RelaunchOnWorkerDeath) makes that cost the jobs it took down, not the sweep.
"""

import copy
import logging
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing import resource_tracker
from typing import Any

from hydra._internal.core_plugins.basic_sweeper import BasicSweeper, BasicSweeperConf
from hydra.core.config_store import ConfigStore
from hydra.core.utils import JobReturn, JobStatus
from hydra.plugins.launcher import Launcher
from hydra.types import HydraContext, TaskFunction
from joblib.externals.loky import get_reusable_executor
from joblib.externals.loky.process_executor import TerminatedWorkerError
from omegaconf import DictConfig, open_dict, read_write

from experiments.callback import take_composed
from experiments.store import tracking
from experiments.store.tracking import job_name
from experiments.store.worker_faults import (
    fail_dead_runs,
    job_outcome,
    record_failed,
    sweep_experiment,
)

log = logging.getLogger(__name__)


class BatchComposingLoader:
    """Hydra's config loader, but load_sweep_config first hands out the config that
    compose_batch composed for the same overrides (each once); everything else is the
    loader's."""

    def __init__(self, loader) -> None:
        self._loader = loader
        self._composed: dict[tuple[str, ...], DictConfig] = {}

    def compose_batch(self, master_config: DictConfig, batch: Sequence[Sequence[str]]) -> None:
        """Each job's config: the one the lab's callback composed to check the sweep, else
        composed here."""
        for overrides in batch:
            composed = take_composed(list(overrides))
            if composed is None:
                composed = self._loader.load_sweep_config(master_config=master_config,
                                                          sweep_overrides=list(overrides))
            self._composed[tuple(overrides)] = composed

    def load_sweep_config(self, master_config: DictConfig,
                          sweep_overrides: list[str]) -> DictConfig:
        composed = self._composed.pop(tuple(sweep_overrides), None)
        if composed is not None:
            return composed
        return self._loader.load_sweep_config(master_config, sweep_overrides)

    def __getattr__(self, name: str):
        return getattr(self._loader, name)

    def __reduce__(self):
        """Pickled for a launcher's other process, it is (a copy of) the loader itself: the
        configs stay here, and the other process composes. (Not this class: Hydra's plugin
        scan can import this module again, and pickle refuses a class that is not the one
        in sys.modules.)"""
        return copy.copy, (self._loader,)


class LabSweeper(BasicSweeper):
    def setup(self, *, hydra_context: HydraContext, task_function: TaskFunction,
              config: DictConfig) -> None:
        loader = BatchComposingLoader(hydra_context.config_loader)
        super().setup(hydra_context=HydraContext(loader, hydra_context.callbacks),
                      task_function=task_function, config=config)
        self.launcher = RelaunchOnWorkerDeath(self.launcher, self.task_config)

    def sweep(self, arguments: list[str]) -> Any:
        """Hydra's basic sweep; after a worker died, its pool is stopped before the summary."""
        try:
            return super().sweep(arguments)
        finally:
            if self.launcher.deaths:
                stop_worker_pool()

    def task_config(self, overrides: list[str]) -> DictConfig:
        """A job's config as its task gets it: composed, without the hydra node."""
        cfg = self.hydra_context.config_loader.load_sweep_config(self.config, overrides)
        with read_write(cfg), open_dict(cfg):
            del cfg["hydra"]
        return cfg

    def validate_batch_is_legal(self, batch: Sequence[Sequence[str]]) -> None:
        """Compose every job of the batch, as Hydra's check does, and keep the configs for the
        launcher."""
        self.hydra_context.config_loader.compose_batch(self.config, batch)


class RelaunchOnWorkerDeath:
    """The sweep's launcher, but a batch that loses a joblib worker (TerminatedWorkerError)
    costs the jobs the broken pool took down, not the sweep: their runs, left RUNNING by dead
    processes, are failed as orphaned and the batch is launched once more (resume skips the
    jobs that ended); if a worker dies again, the batch's unfinished jobs are recorded as
    failed and the sweep goes on with the next batch. Each death is one log line."""

    def __init__(self, launcher: Launcher, task_config: Callable[[list[str]], DictConfig]):
        self._launcher = launcher
        self._task_config = task_config
        self.deaths = 0

    def launch(self, job_overrides: Sequence[Sequence[str]],
               initial_job_idx: int) -> Sequence[JobReturn]:
        try:
            return self._launcher.launch(job_overrides, initial_job_idx=initial_job_idx)
        except TerminatedWorkerError as death:
            self.deaths += 1
            sweep_id = os.environ.get(tracking.SWEEP_RUN_ENV)
            if sweep_id is None:  # no sweep run (the lab's callback is off): nothing to mark
                raise
            experiment_id = sweep_experiment(sweep_id)
            pids = fail_dead_runs(experiment_id, sweep_id)
            log.warning("a joblib worker died (%s): %s; launching the batch of %d jobs again",
                        exit_codes(death), orphaned(pids), len(job_overrides))
        try:
            return self._launcher.launch(job_overrides, initial_job_idx=initial_job_idx)
        except TerminatedWorkerError as death:
            self.deaths += 1
            pids = fail_dead_runs(experiment_id, sweep_id)
            error = (f"worker died: a joblib worker of the sweep died twice in this job's batch "
                     f"({exit_codes(death)}; {orphaned(pids)})")
            returns = [self._unfinished_failed(experiment_id, sweep_id, list(overrides), error)
                       for overrides in job_overrides]  # fmt: skip
            failed = sum(job.return_value == "failed" for job in returns)
            log.error("a joblib worker died again (%s): %s; %d unfinished jobs of the batch "
                      "recorded as failed; the sweep goes on", exit_codes(death),
                      orphaned(pids), failed)
            return returns

    def _unfinished_failed(self, experiment_id: str, sweep_id: str, overrides: list[str],
                           error: str) -> JobReturn:
        """The job's outcome in the store; a job that did not end gets a failed run."""
        cfg = self._task_config(overrides)
        outcome = job_outcome(experiment_id, sweep_id, cfg)
        if outcome is None:
            record_failed(experiment_id, sweep_id, job_name(cfg), tracking.run_key(cfg), error)
            outcome = "failed"
        return JobReturn(overrides=overrides, status=JobStatus.COMPLETED, _return_value=outcome)

    def __getattr__(self, name: str):
        return getattr(self._launcher, name)


def stop_worker_pool() -> None:
    """Stop loky's workers and the multiprocessing resource tracker they share with the sweep,
    which unlinks the locks that dead workers left (numba's, tqdm's) and warns of them: now,
    before the sweep's summary line, rather than after the sweep exited. (_stop: the tracker's
    only way to end but the exit of every process that holds it.)"""
    get_reusable_executor().shutdown(wait=True)
    stop = getattr(resource_tracker._resource_tracker, "_stop", None)
    if stop is not None:
        stop()


def exit_codes(death: TerminatedWorkerError) -> str:
    """loky's `exit codes {SIGKILL(-9)}` of the dead workers, from its message."""
    found = re.search(r"exit codes of the workers are (\{.*\})", str(death))
    return f"exit codes {found.group(1)}" if found else "exit codes unknown"


def orphaned(pids: list[str]) -> str:
    """`the runs of pid 12, 13 failed as orphaned` (or that no run was left RUNNING)."""
    if not pids:
        return "no run of the batch was left RUNNING"
    return f"the runs of pid {', '.join(pids)} failed as orphaned"


@dataclass
class LabSweeperConf(BasicSweeperConf):
    _target_: str = "hydra_plugins.lab_sweeper.lab_sweeper.LabSweeper"


ConfigStore.instance().store(group="hydra/sweeper", name="lab", node=LabSweeperConf,
                             provider="ensembles-lab")
