"""Structured configs: the schema every yaml in conf/ is checked against before a job runs.

Each option of a group (conf/<group>/<option>.yaml) names its schema node in its defaults list,
so a misspelled key or a value of the wrong type is refused at composition time.
"""

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, fields, is_dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from hydra.core.config_store import ConfigStore
from hydra.errors import HydraException, MissingConfigException
from omegaconf import MISSING
from omegaconf.errors import ConfigAttributeError, ConfigKeyError, OmegaConfBaseException

CONF_DIR = Path(__file__).resolve().parents[1] / "conf"


class Task(Enum):
    binary = "binary"
    multiclass = "multiclass"
    regression = "regression"


class EvalKind(Enum):
    holdout = "holdout"
    kfold = "kfold"


class Criterion(Enum):
    """Classification impurity; regression trees always use squared error."""

    gini = "gini"
    entropy = "entropy"


@dataclass
class DatasetConfig:
    """A bundled dataset: its registry name and its task."""

    name: str = MISSING
    task: Task = MISSING


@dataclass
class Hastie10_2Config(DatasetConfig):
    """ESL eq. (10.2): y = 1 if sum of 10 squared N(0,1) features > chi2_10 median 9.34."""

    name: str = "hastie_10_2"
    task: Task = Task.binary
    n_samples: int = 12000
    data_seed: int = 0


@dataclass
class Friedman1Config(DatasetConfig):
    """Friedman (1991): y = 10 sin(pi x1 x2) + 20 (x3 - 0.5)^2 + 10 x4 + 5 x5 + noise N(0, 1)."""

    name: str = "friedman1"
    task: Task = Task.regression
    n_samples: int = 2000
    n_features: int = 10
    noise: float = 1.0
    data_seed: int = 0


@dataclass
class MethodConfig:
    name: str = MISSING


@dataclass
class RandomForestConfig(MethodConfig):
    """Breiman (2001) random forest; parameters as scikit-learn's RandomForest*."""

    name: str = "random_forest"
    n_estimators: int = 100
    max_depth: int | None = None
    min_samples_split: int = 2
    min_samples_leaf: int = 1
    max_features: Any = "sqrt"
    bootstrap: bool = True
    oob_score: bool = False
    criterion: Criterion = Criterion.gini


@dataclass
class LossConfig:
    """A loss key of ensembles.losses, or `auto`: the method's natural loss for the task."""

    name: str = MISSING


@dataclass
class QuantileLossConfig(LossConfig):
    """Pinball loss of the alpha-quantile."""

    name: str = "quantile"
    alpha: float = 0.5


@dataclass
class HuberLossConfig(LossConfig):
    """Huber loss: squared for |residual| <= delta, linear beyond."""

    name: str = "huber"
    delta: float = 1.0


@dataclass
class EngineConfig:
    """Which implementation runs the method: inhouse, xgboost, lightgbm or sklearn."""

    name: str = MISSING
    n_jobs: int = 1


@dataclass
class EvalConfig:
    """Splitting protocol: repeated holdout or repeated k-fold, stratified for classification."""

    kind: EvalKind = EvalKind.holdout
    test_size: float = 0.25
    n_splits: int = 5
    n_repeats: int = 1


@dataclass
class MlflowConfig:
    """Tracking store; None means env MLFLOW_TRACKING_URI, else sqlite:///<project>/mlflow.db."""

    tracking_uri: str | None = None
    experiment_name: str = "default"


@dataclass
class Config:
    dataset: DatasetConfig = MISSING
    method: MethodConfig = MISSING
    loss: LossConfig = MISSING
    engine: EngineConfig = MISSING
    seed: int = 0
    eval: EvalConfig = field(default_factory=EvalConfig)
    mlflow: MlflowConfig = field(default_factory=MlflowConfig)
    resume: bool = True


SCHEMAS: dict[str, dict[str, type]] = {
    "dataset": {
        "dataset_schema": DatasetConfig,
        "hastie_10_2_schema": Hastie10_2Config,
        "friedman1_schema": Friedman1Config,
    },
    "method": {"random_forest_schema": RandomForestConfig},
    "loss": {
        "loss_schema": LossConfig,
        "quantile_schema": QuantileLossConfig,
        "huber_schema": HuberLossConfig,
    },
    "engine": {"engine_schema": EngineConfig},
}


def register_configs() -> None:
    """Store the schema nodes that conf/config.yaml and the group yamls extend."""
    store = ConfigStore.instance()
    store.store(name="config_schema", node=Config)
    for group, nodes in SCHEMAS.items():
        for name, node in nodes.items():
            store.store(group=group, name=name, node=node)


def group_options(group: str) -> list[str]:
    """The options of a config group: its yaml files in conf/ (schema nodes left out)."""
    return sorted(path.stem for path in (CONF_DIR / group).glob("*.yaml"))


def describe_config_error(error: Exception) -> str:
    """One line naming what did not compose and, where known, the allowed values."""
    if isinstance(error, MissingConfigException) and error.missing_cfg_file:
        group, _, option = error.missing_cfg_file.rpartition("/")
        options = group_options(group) or list(error.options or [])
        return f"unknown {group} '{option}'; choose one of: {', '.join(options)}"
    cause = error.__cause__ if isinstance(error.__cause__, OmegaConfBaseException) else error
    if isinstance(cause, OmegaConfBaseException) and cause.full_key:
        schema = cause.object_type
        if isinstance(cause, ConfigAttributeError | ConfigKeyError) and is_dataclass(schema):
            keys = ", ".join(key.name for key in fields(schema))
            return f"unknown key '{cause.full_key}'; choose one of: {keys}"
        return f"{cause.full_key}: {cause.msg.splitlines()[0]}"
    return str(error).strip().splitlines()[0]


@contextmanager
def one_line_config_errors() -> Iterator[None]:
    """Report a config that does not compose as one line on stderr and exit with status 2.
    With HYDRA_FULL_ERROR set by the user, Hydra's full report is left untouched."""
    if os.environ.get("HYDRA_FULL_ERROR"):
        yield
        return
    os.environ["HYDRA_FULL_ERROR"] = "1"  # Hydra re-raises instead of printing several lines
    try:
        yield
    except (HydraException, OmegaConfBaseException) as error:
        print(f"error: {describe_config_error(error)}", file=sys.stderr)
        sys.exit(2)
