"""The offline cache of benchmark suites: per dataset a Parquet file with the dtypes kept
(categorical stays categorical) and a metadata file (source id and version, sha256 of the
Parquet file, task, rows, numeric and categorical features, missing rate, class counts).
`make data` fills it on a machine with internet (experiments.data); jobs only read it.

Layout: <cache>/<suite>/<dataset>.parquet and <dataset>.json; <cache> is dataset.cache, else
the `suites` folder of the lab's OpenML cache: $ENSEMBLES_OPENML_HOME/suites, else
~/.cache/ensembles-lab/openml/suites."""

import hashlib
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

import pandas as pd

OPENML_HOME_ENV = "ENSEMBLES_OPENML_HOME"
OPENML_HOME_DEFAULT = "~/.cache/ensembles-lab/openml"


@dataclass(frozen=True)
class DatasetMetadata:
    """What the cache states about one dataset (its .json file)."""

    name: str
    suite: str
    data_id: int
    version: int | None
    target: str
    task: str
    sha256: str
    rows: int
    numeric_features: int
    categorical_features: int
    missing_rate: float
    class_counts: dict[str, int]


class NotCached(FileNotFoundError):
    """A suite dataset that is not in the cache: the message says how to fetch it."""


def cache_root(cache: str | None = None) -> Path:
    """The cache directory: `cache`, else <OpenML home>/suites (env ENSEMBLES_OPENML_HOME,
    else ~/.cache/ensembles-lab/openml)."""
    if cache:
        return Path(cache).expanduser()
    return openml_home() / "suites"


def openml_home(data_home: str | None = None) -> Path:
    """The lab's OpenML cache: `data_home`, else env ENSEMBLES_OPENML_HOME, else the default."""
    return Path(data_home or os.environ.get(OPENML_HOME_ENV) or OPENML_HOME_DEFAULT).expanduser()


def dataset_paths(suite: str, name: str, cache: str | None = None) -> tuple[Path, Path]:
    """(Parquet file, metadata file) of a suite dataset."""
    folder = cache_root(cache) / suite
    return folder / f"{name}.parquet", folder / f"{name}.json"


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def describe(frame: pd.DataFrame, name: str, suite: str, data_id: int, version: int | None,
             target: str, task: str, sha256: str) -> DatasetMetadata:
    """The metadata of a dataset's frame (features: every column but the target)."""
    features = frame.drop(columns=target)
    categorical = sum(not pd.api.types.is_numeric_dtype(dtype) for dtype in features.dtypes)
    counts = {} if task == "regression" else {
        str(label): int(n) for label, n in frame[target].value_counts().sort_index().items()}
    return DatasetMetadata(name, suite, data_id, version, target, task, sha256, len(frame),
                           features.shape[1] - categorical, categorical,
                           float(features.isna().to_numpy().mean()), counts)  # fmt: skip


def write_dataset(frame: pd.DataFrame, name: str, suite: str, data_id: int, version: int | None,
                  target: str, task: str, cache: str | None = None) -> DatasetMetadata:
    """Write the frame as Parquet and its metadata; return the metadata."""
    parquet, meta = dataset_paths(suite, name, cache)
    parquet.parent.mkdir(parents=True, exist_ok=True)
    frame.to_parquet(parquet, index=False)
    metadata = describe(frame, name, suite, data_id, version, target, task, file_sha256(parquet))
    meta.write_text(json.dumps(asdict(metadata), indent=1))
    return metadata


def is_cached(suite: str, name: str, cache: str | None = None) -> bool:
    """Whether both files of a suite dataset are in the cache."""
    return all(path.exists() for path in dataset_paths(suite, name, cache))


def read_metadata(suite: str, name: str, cache: str | None = None) -> DatasetMetadata:
    """The cached metadata of a dataset; NotCached naming the dataset, its id and the command."""
    _, meta = dataset_paths(suite, name, cache)
    if not meta.exists():
        raise NotCached(not_cached_message(suite, {name: None}, cache))
    return DatasetMetadata(**json.loads(meta.read_text()))


def not_cached_message(suite: str, missing: dict[str, int | None], cache: str | None) -> str:
    """One line: which datasets (name -> OpenML id, if known) are missing from which cache, and
    the command that fetches them."""
    names = ", ".join(f"{name} (OpenML {data_id})" if data_id is not None else name
                      for name, data_id in missing.items())  # fmt: skip
    subject = f"dataset {names} of suite {suite} is" if len(missing) == 1 else (
        f"datasets {names} of suite {suite} are")
    return (f"{subject} not in the cache {cache_root(cache)}; on a machine with internet run: "
            f"make data SUITE={suite}")


def read_dataset(suite: str, name: str, data_id: int, cache: str | None = None) -> tuple[
        pd.DataFrame, DatasetMetadata]:
    """The cached frame and metadata of a dataset, checked against the metadata's sha256."""
    if not is_cached(suite, name, cache):
        raise NotCached(not_cached_message(suite, {name: data_id}, cache))
    parquet, meta = dataset_paths(suite, name, cache)
    metadata = DatasetMetadata(**json.loads(meta.read_text()))
    if file_sha256(parquet) != metadata.sha256:
        raise ValueError(f"{parquet} does not match its checksum in {meta}: fetch it again "
                         f"(make data SUITE={suite})")
    return pd.read_parquet(parquet), metadata
