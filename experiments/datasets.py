"""Datasets by name: a registry of loaders, each returning (X, y) as numpy arrays.

To add a dataset: a loader here, a schema in configs.py if it has parameters, a conf/dataset yaml.
Generated datasets are seeded by the dataset's `data_seed`, so every job seed sees the same data.
Tables (a local file, OpenML) keep missing features as NaN and refuse rows without a target.
"""

from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd
from omegaconf import DictConfig, OmegaConf
from scipy import stats
from sklearn import datasets

from experiments.configs import Task
from experiments.suite_cache import openml_home, read_dataset, read_metadata

Loader = Callable[..., tuple[np.ndarray, np.ndarray]]



def seeded(make: Loader) -> Loader:
    """A scikit-learn generator whose random_state is the dataset's data_seed."""
    return lambda data_seed, **params: make(random_state=data_seed, **params)


def nested_spheres(
    n_samples: int, n_features: int, n_classes: int, data_seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Nested spheres of Friedman, Hastie and Tibshirani (2000, "Additive logistic regression",
    sec. 6): X ~ N(0, I_p) and class k = 1..K iff chi2_p.ppf((k-1)/K) <= sum_j x_j^2 <
    chi2_p.ppf(k/K), so the K classes are equally likely (labels here are k - 1)."""
    X = np.random.default_rng(data_seed).standard_normal((n_samples, n_features))
    radii = stats.chi2.ppf(np.arange(1, n_classes) / n_classes, df=n_features)
    return X, np.searchsorted(radii, np.einsum("ij,ij->i", X, X), side="right")


def frame_to_xy(
    frame: pd.DataFrame, target: str, source: str, categorical: str = "ordinal"
) -> tuple[np.ndarray, np.ndarray, tuple[int, ...]]:
    """Features as float64, the `target` column and the columns to split natively as
    categories; a row without a target is refused. A non-numeric feature becomes its pandas
    category codes (`ordinal`; `native`, which also lists its column) or one 0/1 column per
    category, plus one for a missing value if it has any (`onehot`); missing values of the
    other features stay NaN."""
    if target not in frame.columns:
        columns = ", ".join(map(str, frame.columns))
        raise ValueError(f"no target column '{target}' in {source}; columns: {columns}")
    y = frame[target]
    n_missing = int(y.isna().sum())
    if n_missing:
        raise ValueError(
            f"target column '{target}' of {source} is empty in {n_missing} of {len(y)} rows"
        )
    columns, native = [], []
    for name, column in frame.drop(columns=target).items():
        if pd.api.types.is_numeric_dtype(column):
            columns.append(column.to_numpy(dtype=np.float64, na_value=np.nan)[:, None])
        elif categorical == "onehot":
            indicators = pd.get_dummies(column, prefix=str(name), dummy_na=column.isna().any())
            columns.append(indicators.to_numpy(dtype=np.float64))
        else:
            if categorical == "native":
                native.append(sum(block.shape[1] for block in columns))
            codes = column.astype("category").cat.codes.to_numpy()
            columns.append(np.where(codes >= 0, codes, np.nan)[:, None])
    X = np.hstack(columns) if columns else np.empty((len(frame), 0))
    return X, y.to_numpy(), tuple(native)


def load_table(
    path: str, target: str, categorical: str = "ordinal"
) -> tuple[np.ndarray, np.ndarray, tuple[int, ...]]:
    """A local Parquet file (suffix .parquet) or CSV file (any other suffix) read by pandas."""
    file = Path(path).expanduser().absolute()
    if not file.is_file():
        raise FileNotFoundError(f"no dataset file {file}")
    frame = pd.read_parquet(file) if file.suffix == ".parquet" else pd.read_csv(file)
    return frame_to_xy(frame, target, str(file), categorical)


def load_openml(
    data_id: int, target: str | None, data_home: str | None, categorical: str = "ordinal"
) -> tuple[np.ndarray, np.ndarray, tuple[int, ...]]:
    """OpenML dataset `data_id`, downloaded once into the cache `data_home` (else env
    ENSEMBLES_OPENML_HOME, else ~/.cache/ensembles-lab/openml); `target` defaults to the
    dataset's default target."""
    home = openml_home(data_home)
    try:
        bunch = datasets.fetch_openml(
            data_id=data_id, data_home=home, as_frame=True, target_column=None
        )
    except OSError as error:  # URLError, TimeoutError: offline and not in the cache
        raise OSError(
            f"OpenML dataset {data_id} is not in the cache {home} and cannot be downloaded: {error}"
        ) from error
    target = target or bunch.details.get("default_target_attribute")
    if not target:
        raise ValueError(f"OpenML dataset {data_id} has no default target; set dataset.target")
    return frame_to_xy(bunch.frame, target, f"OpenML dataset {data_id}", categorical)


def load_suite_dataset(
    name: str,
    suite: str,
    data_id: int,
    target: str | None,
    cache: str | None,
    categorical: str = "ordinal",
) -> tuple[np.ndarray, np.ndarray, tuple[int, ...]]:
    """Dataset `name` of a benchmark suite from the offline cache (experiments.suite_cache);
    `target` defaults to the one the cache recorded."""
    frame, metadata = read_dataset(suite, name, data_id, cache)
    return frame_to_xy(frame, target or metadata.target, f"{suite}/{name} (OpenML {data_id})",
                       categorical)


LOADERS: dict[str, Loader] = {
    "breast_cancer": lambda: datasets.load_breast_cancer(return_X_y=True),
    "wine": lambda: datasets.load_wine(return_X_y=True),
    "iris": lambda: datasets.load_iris(return_X_y=True),
    "digits": lambda: datasets.load_digits(return_X_y=True),
    "diabetes": lambda: datasets.load_diabetes(return_X_y=True),
    "hastie_10_2": seeded(datasets.make_hastie_10_2),
    "friedman1": seeded(datasets.make_friedman1),
    "friedman2": seeded(datasets.make_friedman2),
    "friedman3": seeded(datasets.make_friedman3),
    "nested_spheres": nested_spheres,
    "synthetic_classification": seeded(datasets.make_classification),
    "synthetic_regression": seeded(datasets.make_regression),
    "csv": load_table,
    "openml": load_openml,
    "suite": load_suite_dataset,
}
SPLIT_SETTINGS = ("max_train_rows",)  # dataset settings of the splits, not of the loader


def load_dataset(cfg: DictConfig) -> tuple[np.ndarray, np.ndarray]:
    """(X, y) of the dataset config; class labels are encoded as 0..K-1 for classification."""
    return _load_config(cfg)[:2]


def categorical_columns(cfg: DictConfig) -> tuple[int, ...]:
    """The columns of X that dataset.categorical=native asks the engines to split as
    categories (none for other encodings and for datasets without non-numeric features)."""
    return _load_config(cfg)[2]


def _load_config(cfg: DictConfig) -> tuple[np.ndarray, np.ndarray, tuple[int, ...]]:
    params = OmegaConf.to_container(cfg, resolve=True, enum_to_str=True, throw_on_missing=True)
    return _load(tuple(sorted(params.items())), file_stamp(params.get("path")))


def file_stamp(path: str | None) -> tuple[int, int] | None:
    """(size, mtime) of a dataset file, so that an edited file is read again; None if no file."""
    try:
        stat = Path(path).expanduser().stat()
    except (TypeError, OSError):
        return None
    return stat.st_size, stat.st_mtime_ns


@lru_cache(maxsize=8)
def _load(
    params: tuple[tuple[str, object], ...], stamp: tuple[int, int] | None
) -> tuple[np.ndarray, np.ndarray, tuple[int, ...]]:
    """Load once per process and per config (and file stamp, which only keys the cache): a sweep
    does not regenerate or re-read data for every job."""
    kwargs = {key: value for key, value in params if key not in SPLIT_SETTINGS}
    name, task = kwargs["name"], Task(kwargs.pop("task"))
    loader = kwargs.pop("loader", name)  # a suite's datasets share one loader
    if loader not in LOADERS:
        raise ValueError(f"unknown dataset '{name}'; choose one of: {', '.join(sorted(LOADERS))}")
    if loader == name:
        del kwargs["name"]
    X, y, *native = LOADERS[loader](**kwargs)  # tables also return their native columns
    y = encode_target(name, task, y)
    X.setflags(write=False)
    y.setflags(write=False)
    return X, y, native[0] if native else ()


LOADED_COPIES = 4  # float64 features, each split's training and test copies, bins and model


def suite_dataset_megabytes(cfg: DictConfig) -> tuple[float, str] | None:
    """For a suite's dataset, the memory (MiB) a job needs, estimated from the cache metadata
    as LOADED_COPIES x rows x features x 8 bytes, and a description of it; None otherwise."""
    if cfg.get("loader") != "suite":
        return None
    metadata = read_metadata(cfg.suite, cfg.name, cfg.cache)
    features = metadata.numeric_features + metadata.categorical_features
    megabytes = LOADED_COPIES * metadata.rows * features * 8 / 2**20
    return megabytes, f"{metadata.rows} rows x {features} features"


GENERATED = {"hastie_10_2", "friedman1", "friedman2", "friedman3", "nested_spheres",
             "synthetic_classification", "synthetic_regression"}


def describe_dataset(cfg: DictConfig, X: np.ndarray, y: np.ndarray) -> dict[str, str]:
    """Tags data.<field> for the report's datasets table: source, rows, numeric and
    categorical features (a suite dataset's from its cache metadata, before any encoding; else
    every column counts as numeric), missing %, and for classification the classes and the
    minority share."""
    loader = cfg.get("loader", cfg.name)
    numeric, categorical = X.shape[1], 0
    if loader == "suite":
        source = f"OpenML {cfg.data_id}"
        metadata = read_metadata(cfg.suite, cfg.name, cfg.cache)
        numeric, categorical = metadata.numeric_features, metadata.categorical_features
    elif loader == "openml":
        source = f"OpenML {cfg.data_id}"
    elif loader == "csv":
        source = Path(cfg.path).name
    else:
        source = "generated" if loader in GENERATED else "scikit-learn"
    tags = {"source": source, "rows": len(y), "numeric_features": numeric,
            "categorical_features": categorical,
            "missing_pct": round(100 * float(np.isnan(X).mean()), 2)}  # fmt: skip
    if cfg.task is not Task.regression:
        counts = np.bincount(y)
        tags |= {"classes": len(counts), "minority_share": round(counts.min() / len(y), 4)}
    return {f"data.{key}": str(value) for key, value in tags.items()}


def encode_target(name: str, task: Task, y: np.ndarray) -> np.ndarray:
    """A regression target as float64; class labels as 0..K-1, where the task is binary iff K = 2
    and multiclass iff K > 2."""
    if task is Task.regression:
        if y.dtype.kind not in "iuf":
            raise ValueError(f"dataset {name}: a regression target must be numeric, not {y.dtype}")
        return y.astype(np.float64, copy=False)
    classes, labels = np.unique(y, return_inverse=True)
    if len(classes) < 2:
        raise ValueError(f"dataset {name} has {len(classes)} class; classification needs 2 or more")
    declared = Task.binary if len(classes) == 2 else Task.multiclass
    if task is not declared:
        raise ValueError(
            f"dataset {name} has {len(classes)} classes: set dataset.task={declared.value}, "
            f"not {task.value}"
        )
    return labels
