"""A method's search space (conf/search_space/<method>.yaml) as Optuna distributions, its
checks, and the probe values that tell whether an engine can map every searched parameter."""

from dataclasses import fields

import optuna
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from experiments.configs import SCHEMAS, Distribution, ParamSpace


def param_space(values: DictConfig) -> DictConfig:
    """One parameter's values as a ParamSpace node: a key it lacks or a distribution that does
    not exist raises OmegaConf's error naming it."""
    return OmegaConf.merge(OmegaConf.structured(ParamSpace), values)


def distributions(space: DictConfig) -> dict[str, optuna.distributions.BaseDistribution]:
    """Parameter -> Optuna distribution: IntDistribution, FloatDistribution (log scale when
    `log`) or CategoricalDistribution of `choices`."""
    result = {}
    for name, raw in space.items():
        values = param_space(raw)
        if values.distribution is Distribution.categorical:
            choices = OmegaConf.to_container(values.choices)
            result[name] = optuna.distributions.CategoricalDistribution(choices)
        elif values.distribution is Distribution.int:
            result[name] = optuna.distributions.IntDistribution(
                int(values.low), int(values.high), log=values.log
            )
        else:
            result[name] = optuna.distributions.FloatDistribution(
                values.low, values.high, log=values.log
            )
    return result


def space_errors(method: str, space: DictConfig) -> list[str]:
    """What is wrong with the search space of `method`: a parameter the method's schema lacks,
    a range without bounds, with bounds out of order or a log scale from 0, integer bounds that
    are not whole, categorical values without choices."""
    schema = SCHEMAS["method"][f"{method}_schema"]
    known = [item.name for item in fields(schema) if item.name != "name"]
    errors = []
    for name, raw in space.items():
        key = f"search_space.{method}.{name}"
        try:
            values = param_space(raw)
        except OmegaConfBaseException as error:
            errors.append(f"{key}: {str(error).splitlines()[0]}")
            continue
        if name not in known:
            errors.append(f"unknown search-space parameter '{key}'; choose one of: "
                          f"{', '.join(known)}")
        elif values.distribution is Distribution.categorical:
            if not values.choices:
                errors.append(f"{key}: a categorical space needs choices")
        elif values.low is None or values.high is None:
            errors.append(f"{key}: a {values.distribution.value} range needs low and high")
        elif values.low > values.high:
            errors.append(f"{key}: bounds out of order (low {values.low} > high {values.high})")
        elif values.log and values.low <= 0:
            errors.append(f"{key}: a log-scale range needs low > 0 (got {values.low})")
        elif values.distribution is Distribution.int and (
            values.low != int(values.low) or values.high != int(values.high)
        ):
            errors.append(f"{key}: an int range needs whole bounds ({values.low}, {values.high})")
    return errors


def probe_values(space: DictConfig, defaults: DictConfig) -> dict[str, list]:
    """Per parameter, the values of its space that differ from the method config's (the
    choices, or a range's bounds): an engine that refuses every one of them (SkippedJob)
    cannot map the parameter, and the job is skipped before any trial."""
    probes = {}
    for name, distribution in distributions(space).items():
        if isinstance(distribution, optuna.distributions.CategoricalDistribution):
            candidates = list(distribution.choices)
        else:
            candidates = [distribution.high, distribution.low]
        probes[name] = [value for value in candidates if value != defaults[name]]
    return probes


def contains(space: dict[str, optuna.distributions.BaseDistribution], params: dict) -> bool:
    """Whether every value of `params` lies in its distribution: among a categorical's choices,
    within an int (whole) or float range's bounds."""
    for name, distribution in space.items():
        value = params[name]
        if isinstance(distribution, optuna.distributions.CategoricalDistribution):
            if value not in distribution.choices:
                return False
        elif isinstance(value, bool) or not isinstance(value, int | float):
            return False
        elif not distribution.low <= value <= distribution.high:
            return False
        elif (isinstance(distribution, optuna.distributions.IntDistribution)
              and value != int(value)):  # fmt: skip
            return False
    return True
