"""What every engine adapter reads and returns: the job's Spec, the Built estimator with its
approximation tag, and SkippedJob for a combination without a faithful mapping."""

from dataclasses import dataclass
from enum import Enum
from typing import NamedTuple

from omegaconf import DictConfig
from sklearn.base import BaseEstimator

from experiments.configs import Task

GBT_AUTO_LOSS = {Task.regression: "squared", Task.binary: "logistic", Task.multiclass: "softmax"}


class SkippedJob(Exception):
    """A combination that cannot run; the message is the one-line reason."""


class Built(NamedTuple):
    """An unfitted estimator and, where it only approximates the method config, how (the run's
    tag `approximation`; None where it is faithful)."""

    estimator: BaseEstimator
    approximation: str | None = None


@dataclass(frozen=True)
class Spec:
    """What a builder reads: the method and loss configs, the task, the data's
    (n_samples, n_features), the seed, the engine's thread count and the method's estimator
    family (its declaration's, engines.catalog: ensembles.<family>Classifier / Regressor)."""

    method: DictConfig
    loss: DictConfig
    task: Task
    shape: tuple[int, int]
    seed: int
    n_jobs: int
    family: str

    @property
    def regression(self) -> bool:
        return self.task is Task.regression


def gbt_loss(loss: DictConfig, task: Task) -> str:
    """The GBT loss of a loss config: `auto` is squared, logistic or softmax by task."""
    return GBT_AUTO_LOSS[task] if loss.name == "auto" else loss.name


def check_neutral(engine: str, method: DictConfig, **neutral: object) -> None:
    """Skip when a parameter the engine does not have is set away from its neutral value."""
    for name, value in neutral.items():
        if method[name] != value:
            raise SkippedJob(f"{engine} has no {name} (got {method[name]})")


def check_bootstrap_size(method: DictConfig) -> None:
    """Refuse max_samples (a bootstrap's size) without a bootstrap, as scikit-learn's forests
    do: the engines that subsample without replacement would otherwise take it another way."""
    if method.max_samples is not None and not method.bootstrap:
        raise ValueError("max_samples is the size of a bootstrap: set bootstrap=True or "
                         "max_samples=None")


XGBOOST_NAMED = ("n_estimators", "learning_rate", "max_depth", "max_leaves", "grow_policy",
                 "reg_lambda", "reg_alpha", "gamma", "min_child_weight", "subsample",
                 "colsample_bytree", "colsample_bynode", "base_score")


def xgboost_named_params(method: DictConfig) -> dict:
    """The GBT parameters that the in-house estimator and XGBoost take by the same name and
    meaning (the contract's), as constructor arguments."""
    return {name: method[name].value if isinstance(method[name], Enum) else method[name]
            for name in XGBOOST_NAMED}  # fmt: skip
