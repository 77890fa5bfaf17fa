"""Early stopping for XGBoost and LightGBM, which stop on an eval_set given to fit: hold out
the validation rows that the in-house GBT holds out, and pass them as that eval_set."""

import numpy as np
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone, is_classifier
from sklearn.model_selection import train_test_split
from sklearn.utils import check_random_state
from sklearn.utils.metaestimators import available_if

from ensembles.methods.boosting import SEED_RANGE
from experiments.engines.spec import Spec


class HoldoutEarlyStopping(MetaEstimatorMixin, BaseEstimator):
    """Fit an XGBoost or LightGBM model on all training rows but a validation_fraction, and
    stop when its loss on those rows has not improved for early_stopping_rounds rounds; predict
    with the best round. The split is the in-house GBT's: train_test_split seeded with the first
    draw of random_state, stratified for classification."""

    def __init__(self, estimator, early_stopping_rounds=10, validation_fraction=0.1,
                 random_state=None):
        self.estimator = estimator
        self.early_stopping_rounds = early_stopping_rounds
        self.validation_fraction = validation_fraction
        self.random_state = random_state

    def fit(self, X, y):
        seed = check_random_state(self.random_state).randint(SEED_RANGE)
        stratify = y if is_classifier(self.estimator) else None
        X_fit, X_val, y_fit, y_val = train_test_split(
            X, y, test_size=self.validation_fraction, stratify=stratify, random_state=seed)
        model = clone(self.estimator)
        if self._lightgbm:
            import lightgbm

            stop = lightgbm.early_stopping(self.early_stopping_rounds, verbose=False)
            fit_params = {"eval_X": X_val, "eval_y": y_val, "callbacks": [stop]}
        else:
            model.set_params(early_stopping_rounds=self.early_stopping_rounds)
            fit_params = {"eval_set": [(X_val, y_val)], "verbose": False}
        self.library_model_ = model.fit(X_fit, y_fit, **fit_params)
        if is_classifier(model):
            self.classes_ = model.classes_
        return self

    @property
    def _lightgbm(self) -> bool:
        return type(self.estimator).__module__.startswith("lightgbm")

    @property
    def best_iteration_(self) -> int:
        """The last round the model predicts with, counted from 0 (LightGBM counts from 1)."""
        if self._lightgbm:
            return self.library_model_.best_iteration_ - 1
        return self.library_model_.best_iteration

    def predict(self, X) -> np.ndarray:
        return self.library_model_.predict(X)

    @available_if(lambda self: hasattr(self.estimator, "predict_proba"))
    def predict_proba(self, X) -> np.ndarray:
        return self.library_model_.predict_proba(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.estimator_type = self.estimator.__sklearn_tags__().estimator_type
        return tags


def with_early_stopping(model: BaseEstimator, spec: Spec) -> BaseEstimator:
    """The library model, wrapped to stop early on the in-house GBT's validation rows when the
    method config asks for early stopping."""
    if spec.method.early_stopping_rounds is None:
        return model
    return HoldoutEarlyStopping(model, spec.method.early_stopping_rounds,
                                spec.method.validation_fraction, random_state=spec.seed)
