"""The method configs' defaults are the estimators' defaults: a schema, its yaml and the
in-house estimator cannot drift apart."""

import inspect
from dataclasses import MISSING, fields
from enum import Enum

import pytest
from hydra import compose, initialize_config_dir

import ensembles
from experiments.configs import SCHEMAS, register_configs
from experiments.engines.inhouse import INHOUSE_FAMILIES
from experiments.paths import CONF_DIR

register_configs()
FAMILIES = {**INHOUSE_FAMILIES, "gbt": "GradientBoosting"}
# a config value that stands for the estimator's default: "auto" is the task's max_features
CONFIG_ONLY_VALUES = {("max_features", "auto")}


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


@pytest.mark.parametrize("schema", list(SCHEMAS["method"].values()), ids=lambda s: s.key)
def test_a_method_schema_defaults_to_its_estimators_defaults(schema):
    defaults = schema_defaults(schema)
    checked = 0
    for task in ("Classifier", "Regressor"):
        estimator = getattr(ensembles, f"{FAMILIES[schema.key]}{task}", None)
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


@pytest.mark.parametrize("schema", list(SCHEMAS["method"].values()), ids=lambda s: s.key)
def test_a_method_yaml_states_its_schemas_defaults(schema):
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        method = compose("config", overrides=[f"method={schema.key}"]).method
    composed = {
        key: value.value if isinstance(value, Enum) else value
        for key, value in method.items()
        if key != "name"
    }
    assert composed == schema_defaults(schema)
