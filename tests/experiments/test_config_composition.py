"""Every option of every config group composes against its schema; bad keys and values are
refused with one line naming them."""

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.errors import ConfigCompositionException, OverrideParseException
from hydra.types import RunMode

from experiments.callback import sweep_job_configs, sweep_overrides
from experiments.config_errors import describe_config_error
from experiments.configs import group_options
from experiments.paths import CONF_DIR

GROUPS = ["dataset", "method", "loss", "engine"]
OPTIONS = [(group, option) for group in GROUPS for option in group_options(group)]


def compose_config(*overrides: str):
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return compose("config", overrides=list(overrides))


STUDY = CONF_DIR.parent / "tests" / "experiments" / "data" / "study" / "study.yaml"
SWEEP_CHOICES = {"suite": ["suite=grinsztajn_clf_cat"], "study": [f"study={STUDY}"]}


def compose_sweep(name: str) -> tuple:
    """The sweep's config (with its hydra node), every job's overrides, and the composed config
    of each job of `covering` them."""
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        overrides = [f"+sweep={name}", *SWEEP_CHOICES.get(name, [])]
        cfg = compose("config", overrides=overrides, return_hydra_config=True)
        jobs = sweep_overrides(cfg)
        loader = GlobalHydra.instance().config_loader()
        return cfg, jobs, [loader.load_sweep_config(master_config=cfg, sweep_overrides=job)
                           for job in covering(jobs)]  # fmt: skip


def covering(jobs: list[list[str]]) -> list[list[str]]:
    """Jobs in which every override of the sweep (each value of each swept key) occurs at
    least once, taken in the sweep's order: a value that does not compose is met (composing
    every job of a 288-job preset took minutes)."""
    chosen, seen = [], set()
    for job in jobs:
        if not set(job) <= seen:
            chosen.append(job)
            seen |= set(job)
    return chosen


def test_the_contract_groups_have_options():
    assert {"breast_cancer", "wine", "diabetes", "hastie_10_2", "friedman1"} <= set(
        group_options("dataset")
    )
    assert group_options("engine") == ["inhouse", "lightgbm", "sklearn", "xgboost"]
    losses = "auto squared absolute huber quantile logistic exponential softmax poisson"
    assert set(group_options("loss")) == set(losses.split())
    assert "default" in group_options("sweep")


# named by their suite or study key, their file or their OpenML id: test_own_tables.py,
# test_studies.py, test_datasets.py
NAMED_BY_MEMBER = {("dataset", "suite"), ("dataset", "study"), ("dataset", "csv"),
                   ("dataset", "openml")}


@pytest.mark.parametrize(("group", "option"),
                         [pair for pair in OPTIONS if pair not in NAMED_BY_MEMBER])
def test_every_option_composes_and_names_itself(group, option):
    cfg = compose_config(f"{group}={option}")
    assert cfg[group].name == option


@pytest.mark.parametrize("suite", group_options("suite"))
def test_every_suite_composes_and_each_of_its_datasets_resolves(suite):
    cfg = compose_config(f"suite={suite}")
    assert cfg.suite.name == suite
    assert (suite == "none") == (len(cfg.suite.datasets) == 0)
    if not cfg.suite.datasets:
        return
    first = next(iter(cfg.suite.datasets))
    job = compose_config(f"suite={suite}", "dataset=suite", f"dataset.name={first}")
    parser = OverridesParser.create()
    for name, entry in cfg.suite.datasets.items():
        # a sweep passes each name as the override dataset.name=NAME: it must parse as one
        [override] = parser.parse_overrides([f"dataset.name={name}"])
        job.dataset.name = override.value()  # the job's interpolations resolve from the name
        dataset = job.dataset
        assert (dataset.name, dataset.loader, dataset.suite) == (name, "suite", suite)
        assert (dataset.data_id, dataset.task) == (entry.data_id, entry.task)


N_JOBS = {
    "default": 4 * 7 * 2 * 3,  # datasets x methods x engines x seeds
    "parity": 6 * 6 * 4 * 3,  # datasets x methods x engines x seeds
    "esl_10_2": 3 * 2 * 5,  # methods x engines x seeds
    "fht2000": 7 * 3 * 10,  # algorithms and schemes x tree sizes x seeds
    "scaling": 3 * 4 * 3,  # sizes x engines x seeds
    "bias_variance": 2 * 6 * 3,  # datasets x methods x seeds
    "tuned": 6 * 2 * 4 * 2 * 2,  # datasets x methods x engines x (default, random) x seeds
    "tunability": 2 * 2 * 3,  # datasets x methods x seeds
    "suite": 7 * 2 * 4 * 3,  # grinsztajn_clf_cat's datasets x methods x engines x seeds
    "study": 2 * 2 * 4 * 3,  # the test study's files x methods x engines x seeds
}
EXPERIMENTS = {"study": "own_tables"}  # the study file names its experiment


@pytest.mark.parametrize("sweep", group_options("sweep"))
def test_every_sweep_preset_is_a_multirun_whose_jobs_compose(sweep):
    cfg, jobs, composed = compose_sweep(sweep)
    assert cfg.hydra.mode == RunMode.MULTIRUN
    expected = cfg.suite.name if sweep == "suite" else EXPERIMENTS.get(sweep, sweep)
    assert cfg.mlflow.experiment_name == expected
    assert len(jobs) == N_JOBS[sweep]
    assert composed  # each value of each swept key composed


def test_a_command_line_sweep_replaces_the_presets_sweep_of_the_same_key():
    """As Hydra's BasicSweeper: +sweep=tunability seed=5 runs 2 datasets x 2 methods x seed 5."""
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose("config", overrides=["+sweep=tunability", "seed=5"],
                      return_hydra_config=True)
        cfg.hydra.overrides.task = ["+sweep=tunability", "seed=5"]
        jobs = sweep_job_configs(cfg)
    assert len(jobs) == 4 and {job.seed for job in jobs} == {5}


def test_the_tunability_preset_tunes_each_parameter_alone():
    _, _, jobs = compose_sweep("tunability")
    assert {(job.tune.name, job.tune.tunability) for job in jobs} == {("tpe", True)}


def test_generated_datasets_default_to_the_documented_sizes():
    assert compose_config("dataset=hastie_10_2").dataset.n_samples == 12000
    friedman1 = compose_config("dataset=friedman1").dataset
    assert (friedman1.n_samples, friedman1.noise, friedman1.n_features) == (2000, 1.0, 10)


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("dataset=nope", "unknown dataset 'nope'; choose one of: breast_cancer, csv, diabetes,"),
        ("method.max_depth=abc", "method.max_depth: Value 'abc' of type 'str' could not be"),
        ("method.max_dept=3", "unknown key 'method.max_dept'; choose one of: name, n_estimators"),
        ("eval.kind=loo", "eval.kind: Invalid value 'loo', expected one of [holdout, kfold,"),
        ("dataset.task=ranking", "dataset.task: Invalid value 'ranking', expected one of"),
        ("seed=1.5", "seed: Value '1.5' of type 'float' could not be converted to Integer"),
        ("dataset.n_samples=10", "unknown key 'dataset.n_samples'; choose one of: name, task"),
        ("+sweep=nope", "unknown sweep 'nope'; choose one of: bias_variance, default,"),
    ],
)
def test_a_bad_override_is_refused_in_one_line_naming_it(override, message):
    with pytest.raises(ConfigCompositionException) as error:
        compose_config(override)
    description = describe_config_error(error.value)
    assert description.startswith(message)
    assert "\n" not in description


def test_an_override_hydra_cannot_parse_is_told_how_to_quote():
    """~ and parentheses are Hydra's own characters: a path with them must be quoted."""
    with pytest.raises(OverrideParseException) as error:
        compose_config("dataset=csv", "dataset.path=~/data/credit (2).csv")
    assert describe_config_error(error.value) == (
        "cannot parse the override 'dataset.path=~/data/credit (2).csv': quote its value, as in "
        "dataset.path=\"'~/data/credit (2).csv'\" (Hydra reads ~ ( ) [ ] { } , = and spaces as "
        "its own)")
