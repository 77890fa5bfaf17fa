"""Datasets by name: a registry of loaders, each returning (X, y) as numpy arrays.

To add a dataset: a loader here, a schema in configs.py if it has parameters, a conf/dataset yaml.
Generated datasets are seeded by the dataset's `data_seed`, so every job seed sees the same data.
"""

from collections.abc import Callable
from functools import lru_cache

import numpy as np
from omegaconf import DictConfig, OmegaConf
from sklearn import datasets

from experiments.configs import Task

Loader = Callable[..., tuple[np.ndarray, np.ndarray]]

LOADERS: dict[str, Loader] = {
    "breast_cancer": lambda: datasets.load_breast_cancer(return_X_y=True),
    "wine": lambda: datasets.load_wine(return_X_y=True),
    "iris": lambda: datasets.load_iris(return_X_y=True),
    "digits": lambda: datasets.load_digits(return_X_y=True),
    "diabetes": lambda: datasets.load_diabetes(return_X_y=True),
    "hastie_10_2": lambda n_samples, data_seed: datasets.make_hastie_10_2(
        n_samples=n_samples, random_state=data_seed
    ),
    "friedman1": lambda n_samples, n_features, noise, data_seed: datasets.make_friedman1(
        n_samples=n_samples, n_features=n_features, noise=noise, random_state=data_seed
    ),
}


def load_dataset(cfg: DictConfig) -> tuple[np.ndarray, np.ndarray]:
    """(X, y) of the dataset config; class labels are encoded as 0..K-1 for classification."""
    params = OmegaConf.to_container(cfg, enum_to_str=True)
    return _load(tuple(sorted(params.items())))


@lru_cache(maxsize=8)
def _load(params: tuple[tuple[str, object], ...]) -> tuple[np.ndarray, np.ndarray]:
    """Load once per process and per config: a sweep does not regenerate data for every job."""
    kwargs = dict(params)
    name, task = kwargs.pop("name"), Task(kwargs.pop("task"))
    if name not in LOADERS:
        raise ValueError(f"unknown dataset '{name}'; choose one of: {', '.join(sorted(LOADERS))}")
    X, y = LOADERS[name](**kwargs)
    if task is not Task.regression:
        y = np.unique(y, return_inverse=True)[1]
    X.setflags(write=False)
    y.setflags(write=False)
    return X, y
