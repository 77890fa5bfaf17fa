"""Early stopping mapped to XGBoost and LightGBM: the same validation rows as the in-house GBT,
hence (where the models agree round by round) the same best round."""

import numpy as np
import pytest
from sklearn.datasets import make_friedman1, make_hastie_10_2

from experiments.engines import build_estimator
from experiments.engines.early_stopping import HoldoutEarlyStopping

EARLY = ["method=gbt", "method.n_estimators=300", "method.early_stopping_rounds=5",
         "method.max_depth=3", "method.validation_fraction=0.2", "seed=11"]


def friedman1_on_a_grid():
    """Friedman #1 with features rounded to 41 values: the in-house bins are then exact."""
    X, y = make_friedman1(n_samples=800, noise=1.0, random_state=0)
    return np.round(X * 40) / 40, y


def test_xgboost_stops_at_the_in_house_round_on_the_same_validation_rows(compose_job):
    X, y = friedman1_on_a_grid()
    inhouse = build_estimator(compose_job("dataset=friedman1", *EARLY), X.shape).fit(X, y)
    reference = build_estimator(
        compose_job("dataset=friedman1", "engine=xgboost", *EARLY), X.shape
    ).fit(X, y)
    assert isinstance(reference, HoldoutEarlyStopping)
    assert 5 < inhouse.best_iteration_ < 290  # it did stop early
    assert reference.best_iteration_ == inhouse.best_iteration_
    np.testing.assert_allclose(reference.predict(X), inhouse.predict(X), atol=1e-4)


def test_lightgbm_stops_early_and_predicts_with_its_best_round(compose_job):
    import lightgbm

    X, y = make_hastie_10_2(n_samples=1500, random_state=0)
    cfg = compose_job("dataset=hastie_10_2", "engine=lightgbm", *EARLY, "method.learning_rate=1")
    model = build_estimator(cfg, X.shape).fit(X, y)
    library = model.library_model_
    assert isinstance(library, lightgbm.LGBMClassifier)
    assert 0 < model.best_iteration_ < 290
    # LightGBM keeps the trees up to the best round, and predicts with them all
    assert library.booster_.current_iteration() == model.best_iteration_ + 1
    best = library.predict_proba(X, num_iteration=model.best_iteration_ + 1)
    np.testing.assert_array_equal(model.predict_proba(X), best)
    assert list(model.classes_) == [-1.0, 1.0]


@pytest.mark.parametrize("engine", ["xgboost", "lightgbm"])
def test_without_early_stopping_the_library_model_is_not_wrapped(compose_job, engine):
    model = build_estimator(compose_job("dataset=friedman1", f"engine={engine}", "method=gbt"),
                            (100, 10))
    assert not isinstance(model, HoldoutEarlyStopping)
