"""The lab's Hydra sweeper (hydra/sweeper=lab, the default of conf/config.yaml): Hydra's basic
sweeper whose jobs are composed once: by the lab's callback, which checks every job before the
sweep starts (experiments.callback), or else by its check of a batch, for the launcher too.

Hydra's basic sweeper composes every job of a batch to check it, throws the configs away, and
the launcher composes each job again to run it: at 0.18 s a composition, that was a third of
the lab's time per job (make bench, case lab_overhead). Here the check keeps the batch's
configs and the launcher's loader hands each out once (BatchComposingLoader); a launcher that
composes in another process, or a job that is not in the batch, composes as before. Hydra
loads sweepers only from the hydra_plugins namespace, hence this package.
"""

import copy
from collections.abc import Sequence
from dataclasses import dataclass

from hydra._internal.core_plugins.basic_sweeper import BasicSweeper, BasicSweeperConf
from hydra.core.config_store import ConfigStore
from hydra.types import HydraContext, TaskFunction
from omegaconf import DictConfig

from experiments.callback import take_composed


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

    def validate_batch_is_legal(self, batch: Sequence[Sequence[str]]) -> None:
        """Compose every job of the batch, as Hydra's check does, and keep the configs for the
        launcher."""
        self.hydra_context.config_loader.compose_batch(self.config, batch)


@dataclass
class LabSweeperConf(BasicSweeperConf):
    _target_: str = "hydra_plugins.lab_sweeper.lab_sweeper.LabSweeper"


ConfigStore.instance().store(group="hydra/sweeper", name="lab", node=LabSweeperConf,
                             provider="ensembles-lab")
