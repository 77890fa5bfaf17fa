"""Every method's declaration (experiments.engines.catalog) against what it stands for: the
in-house estimator's signature (the schema's defaults are the estimator's), the yamls
(conf/method/<key>.yaml states the schema's defaults, conf/search_space/<key>.yaml searches
schema fields), and the engines (each declared loss builds on each engine with a builder, or is
skipped with the builder's reason; an engine without one is skipped with the declaration's)."""

import copy
import functools
import inspect
import re
from dataclasses import MISSING, fields
from enum import Enum

import numpy as np
import pytest
from hydra import compose, initialize_config_dir
from omegaconf import DictConfig, OmegaConf

import ensembles
from ensembles.losses import LOSSES
from ensembles.methods.adaboost_rounds import ALGORITHMS, MULTICLASS
from experiments.configs import (
    ADABOOST_ALGORITHMS,
    METHOD_SCHEMAS,
    SCHEMAS,
    AdaBoostMulticlass,
    LossConfig,
    Task,
    register_configs,
)
from experiments.engines import SkippedJob, build
from experiments.engines.catalog import ENGINES, METHODS, Members
from experiments.paths import CONF_DIR
from experiments.tuning.space import space_errors

register_configs()
DECLARATIONS = pytest.mark.parametrize("method", METHODS.values(), ids=lambda method: method.key)
# a config value that stands for the estimator's default: "auto" is the task's max_features
CONFIG_ONLY_VALUES = {("max_features", "auto")}
TASK_ESTIMATORS = {Task.binary: "Classifier", Task.multiclass: "Classifier",
                   Task.regression: "Regressor"}  # fmt: skip


def schema_defaults(schema: type) -> dict:
    """Field -> default of a method schema (enums as their values), `name` left out."""
    defaults = {}
    for item in fields(schema):
        if item.name == "name":
            continue
        value = item.default if item.default is not MISSING else item.default_factory()
        defaults[item.name] = value.value if isinstance(value, Enum) else value
    return defaults


def estimator_defaults(estimator: type) -> dict:
    return {
        name: parameter.default
        for name, parameter in inspect.signature(estimator.__init__).parameters.items()
        if parameter.default is not inspect.Parameter.empty
    }


@functools.cache
def composed(key: str) -> DictConfig:
    """The job config of `method=<key>`, composed by Hydra from conf/ (shared: copy to change)."""
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return compose("config", overrides=[f"method={key}"])


def test_every_method_schema_has_one_declaration():
    assert list(METHODS) == list(METHOD_SCHEMAS)
    assert all(METHODS[key].schema is schema for key, schema in METHOD_SCHEMAS.items())
    assert set(SCHEMAS["method"].values()) == set(METHOD_SCHEMAS.values())


@DECLARATIONS
def test_a_method_schema_defaults_to_its_estimators_defaults(method):
    defaults = schema_defaults(method.schema)
    tasks = {TASK_ESTIMATORS[task] for task in method.losses}
    checked = 0
    for task in ("Classifier", "Regressor"):
        estimator = getattr(ensembles, f"{method.family}{task}", None)
        assert (estimator is not None) == (task in tasks), f"{method.family}{task}"
        if estimator is None:
            continue
        own = estimator_defaults(estimator)
        for name, value in defaults.items():
            if (name, value) in CONFIG_ONLY_VALUES or (task == "Regressor" and name == "criterion"):
                continue
            assert name in own, f"{estimator.__name__} has no parameter {name}"
            assert own[name] == value, f"{estimator.__name__}.{name}: {own[name]!r} != {value!r}"
            checked += 1
    assert checked >= len(defaults) - 2


@DECLARATIONS
def test_a_methods_members_are_its_estimators(method):
    """Boosting estimators have staged_predict (the contract); averaging ones do not."""
    estimator = getattr(ensembles, f"{method.family}{TASK_ESTIMATORS[next(iter(method.losses))]}")
    assert (method.members is Members.rounds) == hasattr(estimator, "staged_predict")
    assert method.margins is None or method.members is Members.rounds


def test_the_adaboost_algorithms_are_the_estimators():
    assert set(ADABOOST_ALGORITHMS) == set(ALGORITHMS)
    assert [scheme.value for scheme in AdaBoostMulticlass] == list(MULTICLASS)


@DECLARATIONS
def test_a_method_yaml_states_its_schemas_defaults(method):
    composed_method = composed(method.key).method
    assert OmegaConf.get_type(composed_method) is method.schema
    values = {
        key: value.value if isinstance(value, Enum) else value
        for key, value in composed_method.items()
        if key != "name"
    }
    assert values == schema_defaults(method.schema)


@DECLARATIONS
def test_a_search_space_searches_its_schemas_fields(method):
    path = CONF_DIR / "search_space" / f"{method.key}.yaml"
    space = composed(method.key).search_space[method.key]
    assert space == OmegaConf.load(path), f"{path.name} is not composed (conf/config.yaml)"
    assert set(space) <= {item.name for item in fields(method.schema)} - {"name"}
    assert space_errors(method.key, space) == []


def small_data(task: Task) -> tuple[np.ndarray, np.ndarray]:
    """40 rows of 3 features: 2 or 3 classes by the first feature, or a positive target (for
    the Poisson loss) rising with it."""
    X = np.random.default_rng(0).normal(size=(40, 3))
    if task is Task.regression:
        return X, np.exp(X[:, 0])
    n_classes = 2 if task is Task.binary else 3
    return X, np.searchsorted(np.quantile(X[:, 0], np.arange(1, n_classes) / n_classes), X[:, 0])


def loss_node(name: str) -> DictConfig:
    """A loss config of `name` with its schema's parameters (quantile's alpha, huber's delta)."""
    return OmegaConf.merge(SCHEMAS["loss"].get(f"{name}_schema", LossConfig), {"name": name})


@DECLARATIONS
def test_each_declared_loss_builds_on_each_engine_or_is_skipped(method):
    assert set(method.engines).isdisjoint(method.no_reference)
    assert set(method.engines) | set(method.no_reference) == set(ENGINES)
    assert "inhouse" in method.engines
    for task, losses in method.losses.items():
        estimator = getattr(ensembles, f"{method.family}{TASK_ESTIMATORS[task]}")
        assert "auto" in losses and losses <= {"auto", *LOSSES}
        if "loss" not in estimator_defaults(estimator):  # its one loss: auto, maybe by name
            assert len(losses) <= 2, f"{estimator.__name__} has no loss parameter: {losses}"
        for loss, engine in ((loss, engine) for loss in sorted(losses) for engine in ENGINES):
            cfg = copy.deepcopy(composed(method.key))
            cfg.dataset.task, cfg.engine.name, cfg.loss = task, engine, loss_node(loss)
            if engine in method.no_reference:
                with pytest.raises(SkippedJob, match=re.escape(method.no_reference[engine])):
                    build(cfg, (100, 6))
                continue
            try:
                estimator = build(cfg, (100, 6)).estimator
            except SkippedJob as skipped:  # a reference lacks this loss or task: its reason
                assert engine != "inhouse", f"{method.key} {loss} on {task.value}: {skipped}"
                assert not re.search("does not (take|run on)", str(skipped)), str(skipped)
                continue
            if engine == "inhouse":  # fits: the in-house estimator refuses a loss it lacks
                expected = f"{method.family}{TASK_ESTIMATORS[task]}"
                assert type(estimator) is getattr(ensembles, expected)
                estimator.set_params(n_estimators=2).fit(*small_data(task))
