"""L2Boost: least-squares boosting of regression trees (Buhlmann and Yu 2003; Friedman 2001,
LS_Boost). F_0 = mean(y); F_m = F_{m-1} + nu * T_m, T_m the least-squares tree fit to the
residuals y - F_{m-1} (leaf = mean residual, split = largest decrease of the sum of squares;
the Newton step of l = (y - F)^2 / 2 with lambda = 0, Proba ML 18.5).

The classifier regresses the class codes: y in {-1, +1} for two classes (Buhlmann and Yu's
setting: predict sign F, p = clip((F + 1) / 2)), one-vs-rest indicators for more (predict
argmax_k F_k, p proportional to clip(F_k, 0, 1)).
"""

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin

from ensembles.class_choice import class_labels, most_probable
from ensembles.losses import SquaredLoss
from ensembles.methods.boosting import NewtonBoosting, TreeParams
from ensembles.methods.documentation import (
    BOOSTING,
    BOOSTING_ATTRIBUTES,
    CLASSES,
    numpydoc_sections,
)
from ensembles.methods.validation import (
    encode_classes,
    validate_regression_target,
    validate_training_data,
)


class _BaseL2Boost(NewtonBoosting, BaseEstimator):
    def __init__(self, n_estimators=100, *, learning_rate=0.1, max_depth=3, min_samples_leaf=1,
                 subsample=1.0, categorical_features="from_dtype", random_state=None, n_jobs=None,
                 verbose=0):
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.subsample = subsample
        self.categorical_features = categorical_features
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    def _tree_params(self) -> TreeParams:
        """Plain least-squares trees: no regularization, any split that lowers the squares."""
        return TreeParams(max_depth=self.max_depth, reg_lambda=0.0, min_child_weight=0.0,
                          min_child_samples=self.min_samples_leaf, min_split_gain=0.0)


@numpydoc_sections(BOOSTING, BOOSTING_ATTRIBUTES, ("buhlmann2003", "friedman2001", "probaml"))
class L2BoostRegressor(RegressorMixin, _BaseL2Boost):
    """L2Boost regressor: least-squares boosting of regression trees.

    F_0 = mean(y); round m fits a least-squares tree T_m to the residuals y - F_{m-1} (leaf:
    the mean residual; split: the largest decrease of the sum of squares) and adds it with
    shrinkage, F_m = F_{m-1} + eta T_m [1]_ [2]_. It is the Newton step of
    l = (y - F)^2 / 2 with lambda = 0 [3]_; GradientBoostingRegressor(loss="squared",
    reg_lambda=0) grows the same trees with XGBoost's other regularization.

    Examples
    --------
    The training error after every fifth round:

    >>> from sklearn.datasets import make_regression
    >>> from sklearn.metrics import mean_squared_error
    >>> from ensembles import L2BoostRegressor
    >>> X, y = make_regression(n_samples=100, n_features=5, noise=1.0, random_state=0)
    >>> boost = L2BoostRegressor(n_estimators=20).fit(X, y)
    >>> [round(mean_squared_error(y, p)) for p in boost.staged_predict(X)][::5]
    [17940, 8301, 4128, 2164]
    """

    def fit(self, X, y, sample_weight=None):
        X, y, sample_weight = validate_training_data(self, X, y, sample_weight)
        y = validate_regression_target(y)
        return self._boost(X, y, sample_weight, SquaredLoss(), 1)

    def predict(self, X):
        return self._raw_predict(X)[:, 0]

    def staged_predict(self, X):
        for raw in self._staged_raw_predict(X):
            yield raw[:, 0]


@numpydoc_sections(BOOSTING, BOOSTING_ATTRIBUTES | CLASSES, ("buhlmann2003", "probaml"))
class L2BoostClassifier(ClassifierMixin, _BaseL2Boost):
    """L2Boost classifier: least-squares boosting of the class codes.

    Two classes: the trees regress y in {-1, +1} as L2BoostRegressor does (Buhlmann and Yu's
    setting [1]_); the class is sign F and p(+1 | x) = clip((F + 1) / 2, 0, 1). K > 2 classes:
    one output per class regresses its one-vs-rest indicator; the class is argmax_k F_k and
    p(k | x) is proportional to clip(F_k, 0, 1) [2]_.

    Examples
    --------
    F near -1 or +1 on each side of the moons:

    >>> from sklearn.datasets import make_moons
    >>> from ensembles import L2BoostClassifier
    >>> X, y = make_moons(n_samples=100, noise=0.1, random_state=0)
    >>> boost = L2BoostClassifier(n_estimators=50, learning_rate=0.3).fit(X, y)
    >>> boost.decision_function(X[:3]).round(2), boost.predict(X[:3])
    (array([-0.99,  1.01, -0.96]), array([0, 1, 0]))
    """

    def fit(self, X, y, sample_weight=None):
        X, y, sample_weight = validate_training_data(self, X, y, sample_weight)
        self.classes_, codes = encode_classes(y)
        if len(self.classes_) == 2:
            target = 2.0 * codes - 1.0
        else:
            target = np.eye(len(self.classes_))[codes]
        n_outputs = 1 if target.ndim == 1 else target.shape[1]
        return self._boost(X, target, sample_weight, SquaredLoss(), n_outputs, stratify=codes)

    def _proba(self, raw):
        if raw.shape[1] == 1:
            positive = np.clip((raw[:, 0] + 1.0) / 2.0, 0.0, 1.0)
            return np.column_stack([1.0 - positive, positive])
        clipped = np.clip(raw, 0.0, 1.0)
        total = clipped.sum(axis=1, keepdims=True)
        uniform = np.full_like(clipped, 1.0 / clipped.shape[1])
        return np.divide(clipped, total, out=uniform, where=total > 0)

    def decision_function(self, X):
        raw = self._raw_predict(X)
        return raw[:, 0] if raw.shape[1] == 1 else raw

    def predict_proba(self, X):
        raw = self._raw_predict(X)
        return self._proba(raw)

    def predict(self, X):
        raw = self._raw_predict(X)
        return self._label(raw)

    def _label(self, raw):
        if raw.shape[1] == 1:
            return class_labels(self.classes_, (raw[:, 0] > 0).astype(np.intp))
        return class_labels(self.classes_, most_probable(raw))

    def staged_predict_proba(self, X):
        for raw in self._staged_raw_predict(X):
            yield self._proba(raw)

    def staged_predict(self, X):
        for raw in self._staged_raw_predict(X):
            yield self._label(raw)
