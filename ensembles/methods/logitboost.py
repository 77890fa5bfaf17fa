"""LogitBoost (Friedman, Hastie and Tibshirani 2000, Algorithms 3 and 6).

Each round fits, per class j, a weighted least-squares tree to the working response
z = (y* - p) / (p (1 - p)) with weights w = p (1 - p), clipped to |z| <= z_max. That is a
Newton step on the log-likelihood: with g = p - y*, h = p (1 - p), z = -g / h and w = h, so the
tree and its leaves (sum w z / sum w = -G / H) are those of GBT with lambda = 0.
Binary: F <- F + f / 2, p = e^F / (e^F + e^-F) = sigmoid(2F), so the logistic raw score is 2F.
J classes: f_j <- (J - 1) / J (f_j - mean_k f_k), F_j <- F_j + f_j, p = softmax(F).
"""

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from ensembles.losses import LogisticLoss, Loss, SoftmaxLoss
from ensembles.methods.boosting import (
    XGBOOST_MIN_SPLIT_GAIN,
    LossClassifierOutputs,
    NewtonBoosting,
    TreeParams,
)
from ensembles.methods.documentation import (
    BEST_FIRST,
    BOOSTING_ATTRIBUTES,
    CLASSES,
    numpydoc_sections,
)
from ensembles.methods.validation import (
    check_tree_size,
    encode_classes,
    validate_training_data,
)


class ClippedWorkingResponse(Loss):
    """A likelihood loss whose working response z = -g / h is clipped to [-z_max, z_max]:
    the gradient becomes -h clip(z), the hessian stays h."""

    def __init__(self, likelihood: Loss, z_max: float):
        self.likelihood = likelihood
        self.z_max = z_max

    def n_outputs(self, n_classes):
        return self.likelihood.n_outputs(n_classes)

    def gradient_hessian(self, y, raw):
        grad, hess = self.likelihood.gradient_hessian(y, raw)
        return -hess * np.clip(-grad / hess, -self.z_max, self.z_max), hess

    def loss(self, y, raw, weight):
        return self.likelihood.loss(y, raw, weight)

    def output(self, raw):
        return self.likelihood.output(raw)

    def most_probable(self, raw, overwrite=False):
        return self.likelihood.most_probable(raw, overwrite)


@numpydoc_sections(BEST_FIRST, BOOSTING_ATTRIBUTES | CLASSES, ("fht2000", "probaml"))
class LogitBoostClassifier(LossClassifierOutputs, ClassifierMixin, NewtonBoosting, BaseEstimator):
    """LogitBoost: Newton steps on the binomial or multinomial log-likelihood, by trees.

    Each round fits, per class j, a weighted least-squares tree to the working response
    z = (y* - p) / (p (1 - p)) with weights w = p (1 - p), z clipped to abs(z) <= z_max [1]_
    (Algorithms 3 and 6). Two classes: F <- F + f / 2 and p = sigmoid(2F); J classes:
    f_j <- (J - 1) / J (f_j - mean_k f_k), F_j <- F_j + f_j, p = softmax(F). F_0 = 0, so p = 1/J.
    The trees are those of gradient boosting with g = p - y*, h = p (1 - p) and lambda = 0 [2]_,
    grown depth first to max_depth, or best first to max_leaf_nodes leaves (FHT's J-node
    trees; the gradient grower's lossguide policy).

    Examples
    --------
    Three classes, one tree per class per round:

    >>> from sklearn.datasets import load_iris
    >>> from ensembles import LogitBoostClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> boost = LogitBoostClassifier(n_estimators=10).fit(X[::2], y[::2])
    >>> boost.predict_proba(X[:1]).round(2)
    array([[1., 0., 0.]])
    """

    def __init__(self, n_estimators=100, *, learning_rate=1.0, max_depth=3, max_leaf_nodes=None,
                 z_max=4.0, categorical_features="from_dtype", random_state=None, n_jobs=None,
                 verbose=0):
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.max_depth = max_depth
        self.max_leaf_nodes = max_leaf_nodes
        self.z_max = z_max
        self.categorical_features = categorical_features
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    def _tree_params(self) -> TreeParams:
        """Weighted least squares: lambda = 0, no minimum weight; max_leaf_nodes: best first
        (lossguide), None: depth first (depthwise)."""
        check_tree_size(self)
        if self.max_depth is None and self.max_leaf_nodes is None:
            raise ValueError("max_depth=None (no depth limit) needs max_leaf_nodes")
        return TreeParams(grow_policy="depthwise" if self.max_leaf_nodes is None else "lossguide",
                          max_depth=self.max_depth or 0, max_leaves=self.max_leaf_nodes or 0,
                          reg_lambda=0.0, min_child_weight=0.0,
                          min_split_gain=XGBOOST_MIN_SPLIT_GAIN)

    def _initial_raw(self, loss, y, sample_weight, n_outputs):
        """F_0 = 0: p = 1/2 for two classes, p_j = 1/J for J."""
        return np.zeros(n_outputs)

    def _combine_round(self, update):
        """(J - 1) / J (f_j - mean_k f_k) for J classes; the binary step is f itself."""
        n_outputs = update.shape[1]
        if n_outputs == 1:
            return update
        return (n_outputs - 1) / n_outputs * (update - update.mean(axis=1, keepdims=True))

    def fit(self, X, y, sample_weight=None):
        X, y, sample_weight = validate_training_data(self, X, y, sample_weight)
        if self.z_max is not None and not self.z_max > 0:
            raise ValueError(f"z_max must be > 0 or None, got {self.z_max!r}")
        self.classes_, codes = encode_classes(y)
        likelihood = LogisticLoss() if len(self.classes_) == 2 else SoftmaxLoss()
        z_max = np.inf if self.z_max is None else self.z_max
        self._loss = ClippedWorkingResponse(likelihood, z_max)
        return self._boost(X, codes, sample_weight, self._loss,
                           self._loss.n_outputs(len(self.classes_)), stratify=codes)

    def decision_function(self, X):
        """FHT's additive model F: half the logit for two classes, F_j for J classes."""
        raw = self._raw_predict(X)
        return raw[:, 0] / 2.0 if raw.shape[1] == 1 else raw

