"""engine.defaults_from=library: a reference library at its own defaults, the second default
column of a tuned study. The reference is the library's estimator as its user writes it, with
nothing but the seed and the threads (and the loss the task needs)."""

import lightgbm
import numpy as np
import pytest
import xgboost
from sklearn import ensemble
from sklearn.datasets import make_classification, make_regression

from experiments.engines import SkippedJob, build
from experiments.store.tracking import job_config, job_name, run_key

BINARY = make_classification(300, 8, n_informative=5, random_state=0)
REGRESSION = make_regression(300, 8, noise=10.0, random_state=0)

AS_ITS_USER_WRITES_IT = [
    ("gbt", "xgboost", "breast_cancer", [], xgboost.XGBClassifier(random_state=3, n_jobs=1)),
    ("gbt", "lightgbm", "breast_cancer", [],
     lightgbm.LGBMClassifier(random_state=3, n_jobs=1, verbose=-1)),
    ("gbt", "sklearn", "breast_cancer", [],
     ensemble.HistGradientBoostingClassifier(random_state=3)),
    ("gbt", "lightgbm", "diabetes", ["loss=quantile", "loss.alpha=0.8"],
     lightgbm.LGBMRegressor(objective="quantile", alpha=0.8, random_state=3, n_jobs=1,
                            verbose=-1)),
    ("gbt", "xgboost", "diabetes", ["method.early_stopping_rounds=5"],
     xgboost.XGBRegressor(random_state=3, n_jobs=1)),  # no library stops early by default
    ("random_forest", "xgboost", "diabetes", [], xgboost.XGBRFRegressor(random_state=3, n_jobs=1)),
    ("bagging", "sklearn", "breast_cancer", ["method.n_estimators=20"],
     ensemble.BaggingClassifier(random_state=3, n_jobs=1)),
    ("adaboost", "sklearn", "breast_cancer", ["method.max_depth=3"],
     ensemble.AdaBoostClassifier(random_state=3)),
]  # fmt: skip


@pytest.mark.parametrize("method, engine, dataset, extra, reference", AS_ITS_USER_WRITES_IT)
def test_a_library_at_its_defaults_predicts_as_its_user_gets_it(compose_job, method, engine,
                                                                dataset, extra, reference):
    cfg = compose_job(f"dataset={dataset}", f"method={method}", f"engine={engine}", "seed=3",
                      "engine.defaults_from=library", *extra)  # fmt: skip
    X, y = REGRESSION if dataset == "diabetes" else BINARY
    built = build(cfg, X.shape)
    ours = built.estimator.fit(X, y)
    theirs = reference.fit(X, y)
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))
    np.testing.assert_array_equal(scores(ours, X), scores(theirs, X))
    lab = build(compose_job(f"dataset={dataset}", f"method={method}", f"engine={engine}",
                            "seed=3", *extra), X.shape).estimator.fit(X, y)  # fmt: skip
    assert not np.array_equal(scores(lab, X), scores(theirs, X))  # the lab's defaults differ


def scores(model, X) -> np.ndarray:
    """Class probabilities of a classifier, predictions of a regressor."""
    return model.predict_proba(X) if hasattr(model, "predict_proba") else model.predict(X)


def test_lightgbm_random_forest_keeps_the_labs_row_sampling_and_says_so(compose_job):
    cfg = compose_job("dataset=diabetes", "method=random_forest", "engine=lightgbm",
                      "engine.defaults_from=library")  # fmt: skip
    X, y = REGRESSION
    built = build(cfg, X.shape)
    params = built.estimator.get_params()
    assert (params["boosting_type"], params["bagging_freq"]) == ("rf", 1)
    assert params["num_leaves"] == 31 and "feature_fraction_bynode" not in params
    assert "lab's bagging_fraction" in built.approximation
    built.estimator.fit(X, y)  # LightGBM's rf refuses its own defaults, not these


@pytest.mark.parametrize("overrides, reason", [
    (["engine=inhouse"], "the in-house engine's own defaults are the lab's"),
    (["engine=xgboost", "tune=random"], "engine.defaults_from=library is an untuned column"),
    (["engine=sklearn", "method=random_forest"], "sklearn's own defaults are the lab's"),
])  # fmt: skip
def test_no_second_default_column_where_there_is_none(compose_job, overrides, reason):
    cfg = compose_job("dataset=breast_cancer", "method=gbt", *overrides,
                      "engine.defaults_from=library")  # fmt: skip
    with pytest.raises(SkippedJob, match=reason):
        build(cfg, (300, 8))


def test_the_labs_defaults_keep_the_run_keys_they_had(compose_job):
    lab = compose_job("dataset=breast_cancer", "method=gbt", "engine=xgboost")
    library = compose_job("dataset=breast_cancer", "method=gbt", "engine=xgboost",
                          "engine.defaults_from=library")  # fmt: skip
    assert job_config(lab)["engine"] == {"name": "xgboost", "n_jobs": 1}
    assert run_key(lab) != run_key(library)
    assert job_name(library).endswith("defaults_from=library")
    assert "defaults_from" not in job_name(lab)
