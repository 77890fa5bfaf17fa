"""AdaBoost for K classes with engine trees: SAMME (Zhu, Zou, Rosset and Hastie 2009, the
default), SAMME.R (Real AdaBoost) and Gentle AdaBoost (Friedman, Hastie and Tibshirani 2000),
for K > 2 classes under the multi-class scheme of Zhu et al. (multiclass="samme") or as
AdaBoost.MH (Schapire and Singer 1999, multiclass="mh"); each round's update is in
adaboost_rounds.

SAMME: round m fits a weighted Gini tree g_m (a stump by default), with weighted error
err_m = sum_i w_i [g_m(x_i) != y_i] / sum_i w_i and vote
alpha_m = eta (log((1 - err_m) / err_m) + log(K - 1)), then reweights
w_i <- w_i exp(alpha_m [g_m(x_i) != y_i]). The classifier is argmax_k sum_m alpha_m [g_m = k]
(the seed notes' AdaBoost-DTree, alpha = ln sqrt((1 - eps) / eps) up to the factor 2 and the
K - 1 term). Boosting stops early when a tree is perfect (err = 0) or no better than chance;
SAMME.R stops at a perfect tree only (as scikit-learn < 1.6), gentle never.
"""

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from ensembles.engine.binning import MAX_BINS, BinMapper
from ensembles.engine.cart_grower import CartParams
from ensembles.engine.threads import engine_threads
from ensembles.methods.adaboost_rounds import ALGORITHMS, MULTICLASS, round_algorithm
from ensembles.methods.cart import CartGrower
from ensembles.methods.documentation import ADABOOST, ADABOOST_ATTRIBUTES, numpydoc_sections
from ensembles.methods.validation import (
    check_tree_size,
    encode_classes,
    validate_prediction_data,
    validate_training_data,
)
from ensembles.progress import progress

SEED_RANGE = np.iinfo(np.int32).max


@numpydoc_sections(ADABOOST, ADABOOST_ATTRIBUTES,
                   ("zhu2009", "fht2000", "adaboost_dtree", "schapire1999"))
class AdaBoostClassifier(ClassifierMixin, BaseEstimator):
    """AdaBoost for K classes over engine trees: SAMME, SAMME.R or Gentle AdaBoost.

    SAMME [1]_: round m fits a weighted Gini tree g_m (a stump by default) with weighted error
    err_m = sum_i w_i [g_m(x_i) != y_i] / sum_i w_i and vote
    alpha_m = eta (log((1 - err_m) / err_m) + log(K - 1)), then reweights
    w_i <- w_i exp(alpha_m [g_m(x_i) != y_i]); the class is argmax_k sum_m alpha_m [g_m(x) = k]
    (the seed notes' AdaBoost-DTree [3]_, alpha = ln sqrt((1 - eps) / eps), up to the factor 2
    and the K - 1 term). SAMME.R [1]_ (Real AdaBoost for K = 2 [2]_) adds the trees' log class
    frequencies, gentle [2]_ weighted least-squares trees of y in {-1, +1}, one against the
    rest with a tree per class for K > 2. AdaBoost.MH [4]_ (multiclass="mh"; [2]_ section 8)
    boosts the K binary problems y_ik = +1 if y_i = k else -1 on the N K pairs (i, k) with
    weights w_ik: each round grows one tree on them, its leaves j a partition shared by the
    classes, with a value c_jk per leaf and class (discrete: sign(W+_jk - W-_jk) and a vote
    from the weighted Hamming error; real: 1/2 log(W+_jk / W-_jk); gentle: the weighted mean
    of y_ik), then w_ik <- w_ik exp(-y_ik alpha c_k(x_i)) and the class is argmax_k F_k. Two
    classes are one binary problem under either scheme. Boosting stops early when a tree is
    perfect (err = 0) or, for discrete AdaBoost, no better than chance. Trees are grown
    depth first to max_depth, or best first to max_leaf_nodes leaves (FHT's J-node trees).

    Examples
    --------
    The first votes alpha_m, on ESL's simulated data (section 10.1):

    >>> from sklearn.datasets import make_hastie_10_2
    >>> from ensembles import AdaBoostClassifier
    >>> X, y = make_hastie_10_2(n_samples=100, random_state=0)
    >>> ada = AdaBoostClassifier(n_estimators=20, random_state=0).fit(X, y)
    >>> ada.estimator_weights_[:3].round(2)
    array([0.75, 0.44, 0.67])
    """

    def __init__(self, n_estimators=50, *, learning_rate=1.0, algorithm="SAMME",
                 multiclass="samme", max_depth=1, max_leaf_nodes=None, max_bins=MAX_BINS,
                 categorical_features="from_dtype", random_state=None, n_jobs=None, verbose=0):
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.algorithm = algorithm
        self.multiclass = multiclass
        self.max_depth = max_depth
        self.max_leaf_nodes = max_leaf_nodes
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
        check_tree_size(self)
        if self.algorithm not in ALGORITHMS:
            raise ValueError(f"unknown algorithm {self.algorithm!r}; choose one of: "
                             f"{', '.join(ALGORITHMS)}")
        if self.multiclass not in MULTICLASS:
            raise ValueError(f"unknown multiclass {self.multiclass!r}; choose one of: "
                             f"{', '.join(MULTICLASS)}")
        self.classes_, y_codes = encode_classes(y)
        n_classes = len(self.classes_)
        self._algorithm = algorithm = round_algorithm(self.algorithm, self.multiclass, n_classes)
        self._bin_mapper = BinMapper(self.max_bins, categorical=self.is_categorical_).fit(
            X[weight > 0])
        codes = self._bin_mapper.transform(X, order="C")
        unit_stats = algorithm.unit_stats(y_codes, n_classes)
        weight = algorithm.initial_weight(weight / weight.sum(), n_classes)
        rng = check_random_state(self.random_state)
        params = CartParams(max_features=codes.shape[1], criterion=algorithm.criterion,
                            max_depth=self.max_depth or 0, max_leaves=self.max_leaf_nodes or 0)
        grower = CartGrower(self._bin_mapper, params, len(y_codes), unit_stats.shape[-1])
        self.estimators_, weights, errors = [], [], []
        for _ in progress(range(self.n_estimators), self.n_estimators, self.verbose, "round"):
            with engine_threads(self.n_jobs):
                boosted = algorithm.boost(grower, codes, unit_stats, y_codes, weight,
                                          self.learning_rate, rng.randint(SEED_RANGE))
            if boosted.member is None:
                if not self.estimators_:
                    raise ValueError(f"the first tree's weighted error {boosted.error:.3f} is no "
                                     f"better than chance "
                                     f"({algorithm.chance_error(n_classes):.3f}); "
                                     "boosting cannot start")
                break
            self.estimators_.append(boosted.member)
            weights.append(boosted.vote)
            errors.append(boosted.error)
            if boosted.weight is None:
                break
            weight = boosted.weight
        self.estimator_weights_ = np.array(weights)
        self.estimator_errors_ = np.array(errors)
        return self

    def _staged_scores(self, X):
        """After each round m, the class scores f (n_samples, K): sum_{j <= m} v_j h_j, divided
        by sum_{j <= m} v_j for SAMME and SAMME.R under multiclass="samme" (as scikit-learn),
        with v_j the round's vote and h_j its member's scores (adaboost_rounds)."""
        check_is_fitted(self, "estimators_")
        X = validate_prediction_data(self, X)
        algorithm, n_classes = self._algorithm, len(self.classes_)
        scores = np.zeros((X.shape[0], n_classes))
        total = 0.0
        for member, vote in zip(self.estimators_, self.estimator_weights_, strict=True):
            with engine_threads(self.n_jobs):
                scores += vote * algorithm.scores(member, X, n_classes)
            total += vote
            yield scores / total if algorithm.normalized_scores else scores.copy()

    def staged_decision_function(self, X):
        """The scores f (n_samples, K); for two classes f_1 - f_0 as scikit-learn (SAMME,
        SAMME.R), FHT's F = f_1 (gentle). AdaBoost.MH's are F (n_samples, K)."""
        for scores in self._staged_scores(X):
            yield self._algorithm.decision(scores)

    def decision_function(self, X):
        *_, last = self.staged_decision_function(X)
        return last

    def staged_predict_proba(self, X):
        """softmax(f / (K - 1)) as scikit-learn (SAMME, SAMME.R); 1 / (1 + exp(-2 F_k)),
        normalized over k, for gentle and AdaBoost.MH (adaboost_rounds)."""
        for scores in self._staged_scores(X):
            yield self._algorithm.proba(scores)

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
        """Vote-weighted mean of the rounds' normalized split gains (a gentle K-class round's
        summed over its trees)."""
        check_is_fitted(self, "estimators_")
        total = np.zeros(self.n_features_in_)
        for member, vote in zip(self.estimators_, self.estimator_weights_, strict=True):
            trees = member if isinstance(member, list) else [member]
            gains = sum(tree.feature_gains(self.n_features_in_) for tree in trees)
            if gains.sum() > 0:
                total += vote * gains / gains.sum()
        return total / total.sum() if total.sum() > 0 else total

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags
