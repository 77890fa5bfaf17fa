"""A tuned random forest searches the sample fraction (max_samples) and node size
(min_samples_leaf), Probst et al. (2019)'s most tunable forest parameters, on every engine
that maps them; XGBoost cannot bound a classifier's leaves by rows and skips."""

import pytest

from experiments.run import run_job

FOREST = ("method=random_forest", "method.n_estimators=10", "tune=random", "tune.n_trials=2")


@pytest.mark.parametrize("engine", ["inhouse", "sklearn", "xgboost", "lightgbm"])
def test_a_tuned_forest_searches_sample_fraction_and_node_size(compose_job, runs_of, engine):
    cfg = compose_job("dataset=diabetes", *FOREST, f"engine={engine}")
    assert run_job(cfg) == "ok"
    [tuned] = [run for run in runs_of(cfg) if run.data.tags.get("status") == "ok"]
    assert {"best.max_samples", "best.min_samples_leaf"} <= set(tuned.data.params)
    assert tuned.data.metrics["tune_failed_trials"] == 0
    assert tuned.data.metrics["tune_infeasible_trials"] == 0


def test_xgboost_skips_a_tuned_classification_forest_searching_node_size(compose_job, runs_of):
    cfg = compose_job("dataset=breast_cancer", *FOREST, "engine=xgboost")
    assert run_job(cfg) == "skipped"
    [logged] = runs_of(cfg)
    assert logged.data.tags["skip_reason"].startswith("xgboost bounds a classification leaf")
