"""A command line that does not make a valid job stops before any run, with one line on stderr
that names the bad key or value and what is allowed."""

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import fields, is_dataclass

from hydra.errors import HydraException, MissingConfigException, OverrideParseException
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import ConfigAttributeError, ConfigKeyError, OmegaConfBaseException

from experiments.configs import EvalKind, UncachedPolicy, group_options
from experiments.data.datasets import load_dataset, single_row_classes
from experiments.data.suite_cache import is_cached, not_cached_message
from experiments.data.table_files import absolute_path
from experiments.studies import StudyError
from experiments.tuning.choices import refused_choice
from experiments.tuning.search import SAMPLERS
from experiments.tuning.selection import TUNE_METRICS
from experiments.tuning.space import space_errors


def unknown_keys(node: DictConfig, prefix: str = "") -> list[tuple[str, list[str]]]:
    """(full key, the schema's keys) for every key of `node` and its sub-nodes that their schema
    dataclass lacks: struct mode refuses `method.max_dept=3`, but `+` adds the key anyway."""
    schema = OmegaConf.get_type(node)
    allowed = [item.name for item in fields(schema)] if is_dataclass(schema) else None
    found = []
    for key in node:
        if not prefix and key == "hydra":
            continue  # Hydra's own node, checked by Hydra
        full_key = f"{prefix}{key}"
        if allowed is not None and key not in allowed:
            found.append((full_key, allowed))
        elif OmegaConf.is_dict(node._get_node(key)) and not OmegaConf.is_missing(node, key):
            found += unknown_keys(node[key], f"{full_key}.")
    return found


def exit_if_invalid(cfg: DictConfig) -> None:
    """Exit with status 2 and one line on stderr, before any run starts, when the job config has
    a key its schema lacks (`+method.max_dept=3`) or a mandatory value (???) left unset
    (dataset=csv without dataset.path, ...)."""
    unknown = unknown_keys(cfg)
    if unknown:
        exit_with(unknown_key_message(*unknown[0]))
    problem = suite_dataset_error(cfg)
    if problem:
        exit_with(problem)
    missing = sorted(missing_keys(cfg))
    if missing:
        settings = " ".join(f"{key}=..." for key in missing)
        exit_with(f"missing value for {', '.join(missing)}; set {settings}")
    problem = table_error(cfg.dataset)
    if problem:
        exit_with(problem)
    errors = tuning_errors(cfg)
    if errors:
        exit_with(errors[0])


def missing_keys(node: DictConfig, prefix: str = "") -> Iterator[str]:
    """The full keys of the mandatory values (???) left unset, Hydra's node aside; unlike
    OmegaConf.missing_keys, an interpolation of one (dataset.name: ${file_stem:${.path}}) is
    not resolved, so the unset value itself is named."""
    for key in node:
        if not prefix and key == "hydra":
            continue
        full_key = f"{prefix}{key}"
        if OmegaConf.is_missing(node, key):
            yield full_key
        elif isinstance(node._get_node(key), DictConfig):
            yield from missing_keys(node[key], f"{full_key}.")


def suite_dataset_error(cfg: DictConfig) -> str | None:
    """For a suite's dataset (dataset=suite): no suite chosen, a name the suite lacks, or a
    dataset missing from the offline cache, unless suite.uncached=skip (the line names it, its
    OpenML id and `make data`)."""
    dataset = cfg.dataset
    if dataset.get("loader") != "suite":
        return None
    suite = cfg.suite
    if suite.name == "none":
        return f"dataset=suite needs a suite: suite=NAME, one of: {', '.join(suite_options())}"
    if OmegaConf.is_missing(dataset, "name") or dataset.name not in suite.datasets:
        name = "???" if OmegaConf.is_missing(dataset, "name") else dataset.name
        return (f"unknown dataset.name '{name}' of suite {suite.name}; choose one of: "
                f"{', '.join(suite.datasets)}")
    if suite.uncached is UncachedPolicy.fail and not is_cached(suite.name, dataset.name,
                                                               dataset.cache):  # fmt: skip
        missing = {dataset.name: suite.datasets[dataset.name].data_id}
        return f"{not_cached_message(suite.name, missing, dataset.cache)}{SKIP_HINT}"
    return None


SKIP_HINT = ", or run the cached ones with suite.uncached=skip"


def uncached_datasets(jobs: list[DictConfig]) -> dict[tuple[str, str | None], dict[str, int]]:
    """(suite, cache) -> {name: OpenML id} of the jobs' suite datasets missing from the cache."""
    missing: dict[tuple[str, str | None], dict[str, int]] = {}
    for job in jobs:
        dataset, suite = job.dataset, job.suite
        if (dataset.get("loader") == "suite" and not OmegaConf.is_missing(dataset, "name")
                and dataset.name in suite.datasets
                and not is_cached(suite.name, dataset.name, dataset.cache)):  # fmt: skip
            found = missing.setdefault((suite.name, dataset.cache), {})
            found[dataset.name] = suite.datasets[dataset.name].data_id
    return missing


def uncached_skip_reason(cfg: DictConfig) -> str | None:
    """Why a job is skipped: its suite dataset is missing from the cache and suite.uncached=skip
    (the line names the dataset and `make data`); None otherwise."""
    if cfg.dataset.get("loader") != "suite" or cfg.suite.uncached is not UncachedPolicy.skip:
        return None
    missing = uncached_datasets([cfg])
    return next((not_cached_message(suite, names, cache)
                 for (suite, cache), names in missing.items()), None)  # fmt: skip


def exit_if_uncached(jobs: list[DictConfig]) -> None:
    """Before a sweep: every suite dataset missing from the cache named in one line, with the
    command that fetches them; the sweep stops there (suite.uncached=fail), or runs and logs
    their jobs as skipped (suite.uncached=skip)."""
    missing = uncached_datasets(jobs)
    lines = [not_cached_message(suite, names, cache) for (suite, cache), names in missing.items()]
    if not lines:
        return
    if all(job.suite.uncached is UncachedPolicy.skip for job in jobs):
        print(f"warning: {'; '.join(lines)}; their jobs are logged as skipped "
              "(suite.uncached=skip)", file=sys.stderr)  # fmt: skip
        return
    exit_with(f"{'; '.join(lines)}{SKIP_HINT}")


def exit_if_files_share_a_name(jobs: list[DictConfig]) -> None:
    """Before a sweep: two different files named alike (data/2019/sales.csv and
    data/2020/sales.csv are both `sales`) would share the report's rows; one line names them."""
    paths: dict[str, set[str]] = {}
    for job in jobs:
        if job.dataset.get("loader") == "csv":
            paths.setdefault(job.dataset.name, set()).add(str(absolute_path(job.dataset.path)))
    for name, files in paths.items():
        if len(files) > 1:
            exit_with(f"files {', '.join(sorted(files))} are all named dataset {name}: give "
                      "each a name of its own in a study file (+sweep=study study=FILE)")


def table_error(dataset: DictConfig) -> str | None:
    """For a researcher's file (dataset=csv): what makes it unreadable as the task states (no
    file, a column name twice, no target column, a target that does not fit the task), found by
    loading it once (the jobs of this process reuse the load)."""
    if dataset.get("loader") != "csv":
        return None
    try:
        load_dataset(dataset)
    except Exception as error:  # noqa: BLE001 - one line before any run, whatever the fault
        message, name = str(error).strip().splitlines()[0], f"dataset {dataset.name}"
        if not isinstance(error, OSError | ValueError):
            message = f"{type(error).__name__}: {message}"
        named = message.startswith(name) or f"{name} (" in message
        return message if named else f"{name}: {message}"
    return single_row_classes(dataset)


def suite_options() -> list[str]:
    return [name for name in group_options("suite") if name != "none"]


def tuning_errors(cfg: DictConfig) -> list[str]:
    """What is wrong with the search spaces (every method's) and, for a tuned job, with the
    tune config: a sampler that does not exist, n_trials < 1, a timeout or trial limit <= 0,
    an inner split that cannot be drawn, a metric the task does not have, an eval protocol
    tuning does not combine with, or a categorical choice of its space the job's estimator
    refuses (tuning.choices)."""
    errors = [error for method, space in cfg.search_space.items()
              for error in space_errors(method, space)]  # fmt: skip
    tune = cfg.tune
    if tune.name == "none":
        return errors
    if tune.name not in SAMPLERS:
        errors.append(f"unknown tune.name '{tune.name}'; choose one of: none, "
                      f"{', '.join(SAMPLERS)}")
    if tune.n_trials < 1:
        errors.append(f"tune.n_trials must be >= 1, got {tune.n_trials}")
    if tune.timeout_seconds is not None and tune.timeout_seconds <= 0:
        errors.append(f"tune.timeout_seconds must be > 0 or null, got {tune.timeout_seconds}")
    if tune.trial_seconds is not None and tune.trial_seconds <= 0:
        errors.append(f"tune.trial_seconds must be > 0 or null, got {tune.trial_seconds}")
    if not 0 < tune.test_size < 1:
        errors.append(f"tune.test_size must be a fraction in (0, 1), got {tune.test_size}")
    if tune.n_splits < 2:
        errors.append(f"tune.n_splits must be >= 2, got {tune.n_splits}")
    metrics = TUNE_METRICS[cfg.dataset.task]
    if tune.metric is not None and tune.metric not in metrics:
        errors.append(f"unknown tune.metric '{tune.metric}' for a {cfg.dataset.task.value} task; "
                      f"choose one of: {', '.join(metrics)}")
    if cfg.eval.kind is EvalKind.bias_variance or cfg.eval.parity:
        errors.append("tuning runs with eval.kind holdout or kfold, without eval.parity")
    if not errors:
        refused = refused_choice(cfg)
        errors += [refused] if refused else []
    return errors


def unknown_key_message(key: str, allowed: list[str]) -> str:
    return f"unknown key '{key}'; choose one of: {', '.join(allowed)}"


def exit_with(message: str) -> None:
    print(f"error: {message}", file=sys.stderr)
    sys.exit(2)


def describe_config_error(error: Exception) -> str:
    """One line naming what did not compose and, where known, the allowed values."""
    if isinstance(error, MissingConfigException) and error.missing_cfg_file:
        group, _, option = error.missing_cfg_file.rpartition("/")
        options = group_options(group) or list(error.options or [])
        return f"unknown {group} '{option}'; choose one of: {', '.join(options)}"
    if isinstance(error, OverrideParseException):
        key, _, value = error.override.partition("=")
        if value.startswith("[") and value.endswith("]"):  # a list: quote each element
            value = "[" + ",".join(f"'{item.strip()}'" for item in value[1:-1].split(",")) + "]"
        else:
            value = f"'{value}'"
        return (f"cannot parse the override '{error.override}': quote its value, as in "
                f"{key}=\"{value}\" (Hydra reads ~ ( ) [ ] {{ }} , = and spaces as its own)")
    study_error = next((link for link in causes(error) if isinstance(link, StudyError)), None)
    if study_error is not None:
        return str(study_error)  # raised by a resolver: the study file and its fault
    cause = error.__cause__ if isinstance(error.__cause__, OmegaConfBaseException) else error
    if isinstance(cause, OmegaConfBaseException) and cause.full_key:
        schema = cause.object_type
        if isinstance(cause, ConfigAttributeError | ConfigKeyError) and is_dataclass(schema):
            return unknown_key_message(cause.full_key, [key.name for key in fields(schema)])
        return f"{cause.full_key}: {cause.msg.splitlines()[0]}"
    return str(error).strip().splitlines()[0]


def causes(error: BaseException) -> Iterator[BaseException]:
    """The error and the chain of its causes and contexts (an interpolation's resolver error
    sits a few links down)."""
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        yield error
        error = error.__cause__ or error.__context__


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
        exit_with(describe_config_error(error))
