"""The lab's Hydra sweeper (hydra/sweeper=lab, the default of conf/config.yaml): Hydra's basic
sweeper without its check of each batch of jobs.

Before any job runs, the lab's callback composes every job's config and checks it
(experiments.callback.sweep_job_configs, exit_if_invalid), stopping a sweep whose job does not
compose with one line. The basic sweeper composed each job once more, batch by batch, before
the launcher composed it again to run it: at 0.18 s a composition, that second check was a
third of the lab's time per job (make bench, case lab_overhead). Hydra loads sweepers only
from the hydra_plugins namespace, hence this package.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from hydra._internal.core_plugins.basic_sweeper import BasicSweeper, BasicSweeperConf
from hydra.core.config_store import ConfigStore


class LabSweeper(BasicSweeper):
    def validate_batch_is_legal(self, batch: Sequence[Sequence[str]]) -> None:
        """Nothing: every job was composed and checked before the sweep (module docstring)."""


@dataclass
class LabSweeperConf(BasicSweeperConf):
    _target_: str = "hydra_plugins.lab_sweeper.lab_sweeper.LabSweeper"


ConfigStore.instance().store(group="hydra/sweeper", name="lab", node=LabSweeperConf,
                             provider="ensembles-lab")
