"""Datasets by name: a registry of loaders, each returning (X, y) as numpy arrays.

To add a dataset: a loader here, a schema in configs.py if it has parameters, a conf/dataset yaml.
Generated datasets are seeded by the dataset's `data_seed`, so every job seed sees the same data.
Tables (a local file, OpenML) keep missing features as NaN and refuse rows without a target.
"""

import warnings
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd
from omegaconf import DictConfig, OmegaConf
from scipy import stats
from sklearn import datasets

from experiments.configs import DecimalMark, Task, ThousandsMark
from experiments.data.openml import fetch_frame
from experiments.data.suite_cache import openml_home, read_dataset, read_metadata
from experiments.data.table_files import (
    LEVEL_WORDS,
    DataWarning,
    data_sha256,
    read_table,
    table_file,
)

Loader = Callable[..., tuple[np.ndarray, np.ndarray]]


class Table(NamedTuple):
    """A table as the engines get it: float64 features, the target, the columns to split as
    categories (dataset.categorical=native), and its numeric and categorical features as
    loaded, before any encoding (None for data that is not a table)."""

    X: np.ndarray
    y: np.ndarray
    native_columns: tuple[int, ...] = ()
    numeric_features: int | None = None
    categorical_features: int | None = None
    repairs: tuple[str, ...] = ()  # the DataWarning lines of its reading (table_files)
    classes: tuple = ()  # the class labels as read, in the order of their codes 0..K-1
    native_names: tuple[str, ...] = ()  # the column names of native_columns


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
) -> Table:
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
            f"target column '{target}' of {source} is empty in {n_missing} of {len(y)} rows: "
            "fill or drop those rows in the file"
        )
    columns, native, native_names = [], [], []
    features = frame.drop(columns=target)
    for name, column in features.items():
        if pd.api.types.is_numeric_dtype(column):
            columns.append(column.to_numpy(dtype=np.float64, na_value=np.nan)[:, None])
        elif categorical == "onehot":
            indicators = pd.get_dummies(column, prefix=str(name), dummy_na=column.isna().any())
            columns.append(indicators.to_numpy(dtype=np.float64))
        else:
            if categorical == "native":
                native.append(sum(block.shape[1] for block in columns))
                native_names.append(str(name))
            codes = column.astype("category").cat.codes.to_numpy()
            columns.append(np.where(codes >= 0, codes, np.nan)[:, None])
    X = np.hstack(columns) if columns else np.empty((len(frame), 0))
    n_categorical = sum(not pd.api.types.is_numeric_dtype(dtype) for dtype in features.dtypes)
    return Table(X, y.to_numpy(), tuple(native), features.shape[1] - n_categorical,
                 n_categorical, native_names=tuple(native_names))


def load_table(name: str, path: str, target: str, categorical: str = "ordinal",
               sep: str | None = None, decimal: str = "point", drop: tuple[str, ...] = (),
               thousands: str | None = None, na_values: tuple[str, ...] = ()) -> Table:
    """A local Parquet file (suffix .parquet) or CSV file (any other suffix), read and cleaned
    by experiments.data.table_files; `decimal` names a DecimalMark, `thousands` a ThousandsMark
    (None: detected)."""
    thousands = None if thousands is None else ThousandsMark[thousands].value
    frame = read_table(path, target, sep, DecimalMark[decimal].value, tuple(drop), thousands,
                       tuple(map(str, na_values)))
    return frame_to_xy(frame, target, f"dataset {name} ({table_file(path)})", categorical)


def load_openml(name: str, data_id: int, target: str | None, data_home: str | None,
                categorical: str = "ordinal") -> Table:
    """OpenML dataset `data_id` as OpenML serves it (experiments.data.openml), downloaded once into
    the cache `data_home` (else env ENSEMBLES_OPENML_HOME, else ~/.cache/ensembles-lab/openml);
    `target` defaults to the dataset's default target."""
    frame, details = fetch_frame(data_id, openml_home(data_home))
    target = target or details.get("default_target_attribute")
    if not target:
        raise ValueError(f"OpenML dataset {data_id} has no default target; set dataset.target")
    return frame_to_xy(frame, target, f"OpenML dataset {data_id}", categorical)


def load_suite_dataset(
    name: str,
    suite: str,
    data_id: int,
    target: str | None,
    cache: str | None,
    categorical: str = "ordinal",
) -> Table:
    """Dataset `name` of a benchmark suite from the offline cache (experiments.data.suite_cache);
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
    """The data of a dataset config, loaded once per process.

    Parameters
    ----------
    cfg : DictConfig
        A job config's `dataset` node (conf/dataset/).

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        The features, encoded as `dataset.categorical` says.
    y : ndarray of shape (n_samples,)
        The target; class labels encoded as 0..K-1.
    """
    return _load_config(cfg)[:2]


def categorical_columns(cfg: DictConfig) -> tuple[int, ...]:
    """The columns of X that dataset.categorical=native asks the engines to split as
    categories (none for other encodings and for datasets without non-numeric features)."""
    return _load_config(cfg).native_columns


def native_category_counts(cfg: DictConfig) -> dict[str, int]:
    """Each column split natively as categories (dataset.categorical=native): its name and its
    number of categories."""
    table = _load_config(cfg)
    return {name: len(np.unique(column[~np.isnan(column)]))
            for name, column in zip(table.native_names, table.X[:, list(table.native_columns)].T,
                                    strict=True)}  # fmt: skip


def single_row_classes(cfg: DictConfig) -> str | None:
    """One line naming the classes of a single row, which no stratified split can put on both
    sides (None if there are none)."""
    table = _load_config(cfg)
    if not table.classes:
        return None
    counts = np.bincount(table.y, minlength=len(table.classes))
    single = [table.classes[code] for code in np.flatnonzero(counts < 2)]
    if not single:
        return None
    shown = ", ".join(repr(getattr(label, "item", lambda label=label: label)()) for label in single)
    return (f"dataset {cfg.name}: the classes {shown} have a single row, too few for a "
            "stratified split: fix or drop those rows in the file")


def _load_config(cfg: DictConfig) -> Table:
    params = OmegaConf.to_container(cfg, resolve=True, enum_to_str=True, throw_on_missing=True)
    settings = tuple(sorted((key, tuple(value) if isinstance(value, list) else value)
                            for key, value in params.items()))  # fmt: skip
    return _load(settings, file_stamp(params.get("path")))


def file_stamp(path: str | None) -> tuple[int, int] | None:
    """(size, mtime) of a dataset file, so that an edited file is read again; None if no file."""
    try:
        stat = Path(path).expanduser().stat()
    except (TypeError, OSError):
        return None
    return stat.st_size, stat.st_mtime_ns


@lru_cache(maxsize=8)
def _load(params: tuple[tuple[str, object], ...], stamp: tuple[int, int] | None) -> Table:
    """Load once per process and per config (and file stamp, which only keys the cache): a sweep
    does not regenerate or re-read data for every job. A table's loader (key `loader`: csv,
    openml, suite) gets its name; a registry dataset is loaded by its name."""
    kwargs = {key: value for key, value in params if key not in SPLIT_SETTINGS}
    name, task = kwargs["name"], Task(kwargs.pop("task"))
    loader = kwargs.pop("loader", None) or kwargs.pop("name")
    if loader not in LOADERS:
        raise ValueError(f"unknown dataset '{name}'; choose one of: {', '.join(sorted(LOADERS))}")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DataWarning)
        table = Table(*LOADERS[loader](**kwargs))
    for caught_warning in caught:  # shown once (the load is cached), kept for the run's tags
        data = issubclass(caught_warning.category, DataWarning)  # one line: no source line
        warnings.warn_explicit(caught_warning.message, caught_warning.category,
                               f"dataset {name}" if data else caught_warning.filename,
                               0 if data else caught_warning.lineno)
    repairs = tuple(str(w.message) for w in caught if issubclass(w.category, DataWarning))
    classes = () if task is Task.regression else tuple(np.unique(table.y))  # as encode_target
    table = table._replace(repairs=repairs, classes=classes)
    y = encode_target(name, task, table.y)
    table.X.setflags(write=False)
    y.setflags(write=False)
    return table._replace(y=y)


MAX_TAG_CHARS = 5000  # MLflow's limit of a tag value

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
    categorical features (a table's as loaded, before any encoding; else every column counts
    as numeric), missing %, for classification the classes and the minority share; for a
    table its encoding and target column, and for a file its path and sha256."""
    loader = cfg.get("loader", cfg.name)
    table = _load_config(cfg)
    numeric, categorical = X.shape[1], 0
    if table.numeric_features is not None:
        numeric, categorical = table.numeric_features, table.categorical_features
    if loader == "suite":
        source = f"OpenML {cfg.data_id}"
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
    if "categorical" in cfg:
        tags["encoding"] = getattr(cfg.categorical, "value", cfg.categorical)
    if "target" in cfg:
        tags["target"] = cfg.target or "default"
    if loader == "csv":
        tags |= {"path": table_file(cfg.path), "sha256": data_sha256(cfg.path),
                 "reading": reading_settings(cfg)}
    if table.repairs:
        tags["warnings"] = "\n".join(table.repairs)[:MAX_TAG_CHARS]
    return {f"data.{key}": str(value) for key, value in tags.items()}


def reading_settings(cfg: DictConfig) -> str:
    """How a file was read beyond its path and target (drop, sep, decimal, thousands,
    na_values), as `key=value; ...` of the settings away from their defaults (tag data.reading:
    the report's rows keep two readings of one file apart); `default` if none."""
    decimal = getattr(cfg.decimal, "name", cfg.decimal)
    thousands = cfg.get("thousands")
    changed = {"drop": ",".join(cfg.drop), "sep": cfg.sep or "",
               "decimal": "" if decimal == DecimalMark.point.name else decimal,
               "thousands": getattr(thousands, "name", thousands) or "",
               "na_values": ",".join(map(str, cfg.get("na_values") or ()))}
    return "; ".join(f"{key}={value}" for key, value in changed.items() if value) or "default"


MANY_CLASSES = 20  # distinct numbers of a target, from which it may be a count (25-346)
RARE_CLASS_ROWS = 3  # a class of fewer rows of such a target is a value, not a class


def encode_target(name: str, task: Task, y: np.ndarray) -> np.ndarray:
    """A regression target as float64; class labels as 0..K-1, where the task is binary iff K = 2
    and multiclass iff K > 2. A target that does not fit the task is refused, saying what it
    looks like: text to regress; to classify, fractional numbers, or whole numbers most of
    whose values are in a single row (in fewer than RARE_CLASS_ROWS rows when there are
    MANY_CLASSES or more, as the values of a count are)."""
    if task is Task.regression:
        numbers = pd.to_numeric(pd.Series(y), errors="coerce")
        text = y[numbers.isna().to_numpy()]
        if y.dtype.kind not in "iuf" and 0 < len(text) <= len(y) / 2:
            raise ValueError(f"dataset {name}: the regression target has {len(text)} cells that "
                             f"are not numbers (e.g. {text[0]!r}): fix or drop those rows")
        if y.dtype.kind not in "iuf" and len(text) == 0:
            return numbers.to_numpy(dtype=np.float64)
        if y.dtype.kind not in "iuf":
            classes = pd.unique(y)
            shown = ", ".join(map(repr, classes[:3]))
            raise ValueError(f"dataset {name}: a regression target must be numeric, not {y.dtype} "
                             f"(it looks like {len(classes)} classes: {shown}, ...): set "
                             f"dataset.task={'binary' if len(classes) == 2 else 'multiclass'}")
        return y.astype(np.float64, copy=False)
    if y.dtype.kind == "f" and not np.all(y == np.round(y)):
        raise ValueError(f"dataset {name}: the target looks continuous ({len(np.unique(y))} "
                         f"distinct numbers in {len(y)} rows, e.g. {y[y != np.round(y)][0]}): "
                         "set dataset.task=regression")
    classes, labels, counts = np.unique(y, return_inverse=True, return_counts=True)
    if len(classes) < 2:
        raise ValueError(f"dataset {name} has {len(classes)} class; classification needs 2 or more")
    rows = 2 if len(classes) < MANY_CLASSES else RARE_CLASS_ROWS
    rare = int(np.sum(counts < rows))
    if y.dtype.kind in "iuf" and 2 * rare > len(classes):
        where = "a single row" if rows == 2 else f"fewer than {rows} rows"
        raise ValueError(f"dataset {name}: the target looks like a number to predict, not "
                         f"classes ({rare} of its {len(classes)} distinct values are in {where}): "
                         "set dataset.task=regression")
    declared = Task.binary if len(classes) == 2 else Task.multiclass
    if task is not declared:
        words = [str(label) for label in classes if str(label) in LEVEL_WORDS]
        missing = (f"if {words[0]!r} marks missing values, dataset.na_values=[{words[0]}] reads "
                   "it so (then drop those rows); else " if len(classes) - len(words) == 2 and
                   task is Task.binary and y.dtype.kind not in "iuf" else "")  # fmt: skip
        raise ValueError(
            f"dataset {name} has {len(classes)} classes ({class_counts(classes, counts)}): "
            f"{missing}set dataset.task={declared.value}, not {task.value}"
        )
    return labels


def class_counts(classes: np.ndarray, counts: np.ndarray, shown: int = 5) -> str:
    """'MALE' 168, 'FEMALE' 165, '_' 1: the most frequent classes first, at most `shown`."""
    order = np.argsort(-counts, kind="stable")[:shown]
    more = ", ..." if len(classes) > shown else ""
    labels = [getattr(label, "item", lambda label=label: label)() for label in classes]
    return ", ".join(f"{labels[i]!r} {counts[i]}" for i in order) + more
