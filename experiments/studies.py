"""A study of one's own files: a yaml file, anywhere, listing CSV or Parquet files as datasets
(no OpenML id, no copy into conf/), swept by `+sweep=study study=FILE`:

    name: credit_and_churn        # the MLflow experiment (default: the yaml file's stem)
    datasets:                     # dataset.name -> its file (relative to this yaml), target, task
      credit: {path: credit.csv, target: default, task: binary}
      churn: {path: data/churn.parquet, target: churned, task: binary, drop: [customer_id]}

An entry also takes the settings of dataset=csv: `drop`, `sep`, `decimal` (point, comma).
conf/dataset/study.yaml reads an entry through the resolver ${study_entry:FILE,NAME,FIELD}, so
a study's job is a dataset=csv job of that file."""

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import yaml
from omegaconf import MISSING, OmegaConf
from omegaconf.errors import OmegaConfBaseException


@dataclass
class StudyEntry:
    """One file of a study, with the settings of dataset=csv."""

    path: str = MISSING
    target: str = MISSING
    task: str = MISSING
    drop: list[str] = field(default_factory=list)
    sep: str | None = None
    decimal: str = "point"


@dataclass
class Study:
    name: str | None = None
    datasets: dict[str, StudyEntry] = field(default_factory=dict)


class StudyError(ValueError):
    """A study file that cannot be read: the message names the file and what is wrong."""


def study_file(path: str | None) -> Path:
    if not path:
        raise StudyError("+sweep=study needs a study file: study=FILE.yaml")
    file = Path(path).expanduser().absolute()
    if not file.is_file():
        raise StudyError(f"no study file {file}")
    return file


@lru_cache(maxsize=8)
def read_study(path: str | None) -> Study:
    """The study file checked against Study (unknown keys and missing values refused), each
    entry's path made absolute against the file's folder."""
    file = study_file(path)
    try:
        raw = OmegaConf.load(file)
    except yaml.YAMLError as error:  # a key twice, a bad indent
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        mark = getattr(error, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise StudyError(f"study {file}: {problem}{where}") from None
    if OmegaConf.is_list(raw.get("datasets")):
        raise StudyError(f"study {file}: datasets must map each name to its "
                         "{path, target, task}, not be a list")
    try:
        study = OmegaConf.merge(OmegaConf.structured(Study), raw)
    except OmegaConfBaseException as error:
        raise StudyError(f"study {file}: {str(error).splitlines()[0]}") from None
    missing = sorted(OmegaConf.missing_keys(study))
    if missing:
        raise StudyError(f"study {file}: missing {', '.join(missing)}")
    study = OmegaConf.to_object(study)
    if not study.datasets:
        raise StudyError(f"study {file} lists no datasets")
    for entry in study.datasets.values():
        entry.path = str((file.parent / Path(entry.path).expanduser()).absolute())
    study.name = study.name or file.stem
    return study


def study_entry(path: str | None, name: str, key: str):
    """Field `key` of dataset `name` of the study at `path`."""
    study = read_study(path)
    if name not in study.datasets:
        raise StudyError(f"unknown dataset.name '{name}' of study {study_file(path)}; choose one "
                         f"of: {', '.join(study.datasets)}")
    return getattr(study.datasets[name], key)


def register_study_resolvers() -> None:
    """${study_datasets:FILE} (its dataset names, comma-separated: a sweep over them),
    ${study_name:FILE} and ${study_entry:FILE,NAME,FIELD}."""
    OmegaConf.register_new_resolver(
        "study_datasets", lambda path: ",".join(read_study(path).datasets), replace=True)
    OmegaConf.register_new_resolver("study_name", lambda path: read_study(path).name,
                                    replace=True)
    OmegaConf.register_new_resolver("study_entry", study_entry, replace=True)
