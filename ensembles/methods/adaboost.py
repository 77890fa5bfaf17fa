"""AdaBoost for K classes: SAMME (Zhu, Zou, Rosset and Hastie 2009), with engine trees.

Round m fits a weighted Gini tree g_m (a stump by default), with weighted error
err_m = sum_i w_i [g_m(x_i) != y_i] / sum_i w_i and vote
alpha_m = eta (log((1 - err_m) / err_m) + log(K - 1)), then reweights
w_i <- w_i exp(alpha_m [g_m(x_i) != y_i]). The classifier is argmax_k sum_m alpha_m [g_m = k]
(the seed notes' AdaBoost-DTree, alpha = ln sqrt((1 - eps) / eps) up to the factor 2 and the
K - 1 term). Boosting stops early when a tree is perfect (err = 0) or no better than chance.
"""

import numpy as np
from scipy.special import softmax
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from ensembles.engine.binning import MAX_BINS, BinMapper
from ensembles.engine.splitting import GINI
from ensembles.methods.cart import CartGrower, CartParams
from ensembles.methods.validation import (
    encode_classes,
    validate_prediction_data,
    validate_training_data,
)
from ensembles.progress import progress

SEED_RANGE = np.iinfo(np.int32).max


class AdaBoostClassifier(ClassifierMixin, BaseEstimator):
    """SAMME AdaBoost over engine trees of depth `max_depth`. n_jobs is accepted for a uniform
    interface; the rounds are sequential."""

    def __init__(self, n_estimators=50, *, learning_rate=1.0, max_depth=1, max_bins=MAX_BINS,
                 categorical_features="from_dtype", random_state=None, n_jobs=None, verbose=0):
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.max_depth = max_depth
        self.max_bins = max_bins
        self.categorical_features = categorical_features
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    def fit(self, X, y, sample_weight=None):
        X, y, weight = validate_training_data(self, X, y, sample_weight)
        if not (isinstance(self.n_estimators, (int, np.integer)) and self.n_estimators >= 1):
            raise ValueError(f"n_estimators must be an int >= 1, got {self.n_estimators!r}")
        if not self.learning_rate > 0:
            raise ValueError(f"learning_rate must be > 0, got {self.learning_rate!r}")
        if not self.max_depth >= 1:
            raise ValueError(f"max_depth must be >= 1, got {self.max_depth!r}")
        self.classes_, y_codes = encode_classes(y)
        n_classes = len(self.classes_)
        self._bin_mapper = BinMapper(self.max_bins, categorical=self.is_categorical_).fit(
            X[weight > 0])
        codes = self._bin_mapper.transform(X, order="C")
        one_hot = np.eye(n_classes)[y_codes]
        weight = weight / weight.sum()
        rng = check_random_state(self.random_state)
        grower = CartGrower(self._bin_mapper, CartParams(max_features=codes.shape[1],
                                                         criterion=GINI, max_depth=self.max_depth),
                            *one_hot.shape)
        self.estimators_, weights, errors = [], [], []
        for m in progress(range(self.n_estimators), self.n_estimators, self.verbose, "round"):
            tree = self._grow_tree(grower, codes, one_hot, weight, rng.randint(SEED_RANGE))
            incorrect = np.argmax(tree.predict_binned(codes), axis=1) != y_codes
            error = float(np.average(incorrect, weights=weight))
            if error <= 0.0:
                self.estimators_.append(tree)
                weights.append(1.0)
                errors.append(0.0)
                break
            if error >= 1.0 - 1.0 / n_classes:
                if m == 0:
                    raise ValueError(f"the first tree's weighted error {error:.3f} is no better "
                                     f"than chance (1 - 1/K = {1 - 1 / n_classes:.3f}); "
                                     "boosting cannot start")
                break
            vote = self.learning_rate * (np.log((1.0 - error) / error) + np.log(n_classes - 1))
            self.estimators_.append(tree)
            weights.append(vote)
            errors.append(error)
            weight = weight * np.exp(vote * incorrect)
            weight /= weight.sum()
        self.estimator_weights_ = np.array(weights)
        self.estimator_errors_ = np.array(errors)
        return self

    @staticmethod
    def _grow_tree(grower, codes, one_hot, weight, seed):
        """A weighted-Gini CART tree over every feature (scikit-learn's DecisionTreeClassifier
        of the same max_depth)."""
        rows = np.flatnonzero(weight > 0).astype(np.int32)
        return grower.grow(codes, one_hot * weight[:, None], rows, seed)

    def _staged_scores(self, X):
        """After each round m: f_k = sum_{j <= m} alpha_j h_jk / sum_{j <= m} alpha_j with
        SAMME's symmetric coding h_jk = 1 if g_j(x) = k else -1 / (K - 1)."""
        check_is_fitted(self, "estimators_")
        X = validate_prediction_data(self, X)
        n_classes = len(self.classes_)
        scores = np.zeros((X.shape[0], n_classes))
        total = 0.0
        for tree, vote in zip(self.estimators_, self.estimator_weights_, strict=True):
            coded = np.full_like(scores, -1.0 / (n_classes - 1))
            coded[np.arange(X.shape[0]), np.argmax(tree.predict(X), axis=1)] = 1.0
            scores += vote * coded
            total += vote
            yield scores / total

    def staged_decision_function(self, X):
        """The scores f (n_samples, K); for two classes f_1 - f_0, as scikit-learn."""
        for scores in self._staged_scores(X):
            yield scores[:, 1] - scores[:, 0] if scores.shape[1] == 2 else scores

    def decision_function(self, X):
        *_, last = self.staged_decision_function(X)
        return last

    def staged_predict_proba(self, X):
        """softmax(f / (K - 1)), scikit-learn's SAMME probabilities."""
        for scores in self._staged_scores(X):
            yield softmax(scores / (len(self.classes_) - 1), axis=1)

    def predict_proba(self, X):
        *_, last = self.staged_predict_proba(X)
        return last

    def staged_predict(self, X):
        for scores in self._staged_scores(X):
            yield self.classes_[np.argmax(scores, axis=1)]

    def predict(self, X):
        *_, last = self.staged_predict(X)
        return last

    @property
    def feature_importances_(self):
        """Vote-weighted mean of the trees' normalized split gains."""
        check_is_fitted(self, "estimators_")
        total = np.zeros(self.n_features_in_)
        for tree, vote in zip(self.estimators_, self.estimator_weights_, strict=True):
            gains = tree.feature_gains(self.n_features_in_)
            if gains.sum() > 0:
                total += vote * gains / gains.sum()
        return total / total.sum() if total.sum() > 0 else total

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags
