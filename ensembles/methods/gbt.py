"""Regularized gradient-boosted trees: XGBoost's second-order objective with shrinkage,
row subsampling and column subsampling (CSC411 GBT notes; Chen and Guestrin 2016).

Parameters have XGBoost's meaning; `base_score` is the initial prediction in the output space
(None: the loss's best constant, estimated from the data); `categorical_features` as in
scikit-learn's HistGradientBoosting (ensembles.methods.categorical). `n_jobs` is the number of
threads of fit and predict with joblib's meaning (None: 1, -1: every core), as in
scikit-learn, except that a fit on fewer than 2^20 values (rows x features) runs on one
(engine.threads.SERIAL_TABLE); the model does not depend on it.

Categorical (set) splits are regularized as LightGBM's, with its names (the rules:
ensembles.engine.categories; the defaults and the measurement that chose them:
docs/categorical_splits.md):

==================  =====================================  ==================  ================
parameter           meaning                                XGBoost             HistGB
==================  =====================================  ==================  ================
cat_smooth          categories of fewer rows at the node   none: orders by     MIN_CAT_SUPPORT
                    are not sorted in (they follow the     G / (H + lambda)    (10, fixed)
                    missing values); order by
                    G / (H + cat_smooth)
cat_l2              added to reg_lambda in a set split's   none                none
                    children's scores (not the parent's)
min_data_per_group  rows each side of a set split          none                none
max_cat_threshold   categories one side of a set split     max_cat_threshold   none (half the
                    at most                                - 1                 order)
max_cat_to_onehot   fewer categories in the feature: one   the same rule       none
                    against the rest
==================  =====================================  ==================  ================

LightGBM has all five under these names (its counts estimated from the hessians, its one-hot
rule num_bin <= max_cat_to_onehot); unlike LightGBM, cat_l2 does not shrink the leaf values.
"""

from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin

from ensembles.engine.binning import MAX_BINS
from ensembles.losses import make_loss
from ensembles.methods.boosting import (
    XGBOOST_MIN_SPLIT_GAIN,
    LossClassifierOutputs,
    NewtonBoosting,
    TreeParams,
)
from ensembles.methods.documentation import (
    BOOSTING_ATTRIBUTES,
    CLASSES,
    EARLY_STOPPING_ATTRIBUTES,
    GBT,
    GBT_CLASSIFIER,
    numpydoc_sections,
)
from ensembles.methods.validation import (
    encode_classes,
    validate_regression_target,
    validate_training_data,
)

REGRESSION_LOSSES = ("squared", "absolute", "huber", "quantile", "poisson")
CLASSIFICATION_LOSSES = ("logistic", "exponential", "softmax")


class _BaseGBT(NewtonBoosting, BaseEstimator):
    def __init__(self, *, loss=None, n_estimators=100, learning_rate=0.3, max_depth=6, max_leaves=0,
                 grow_policy="depthwise", reg_lambda=1.0, reg_alpha=0.0, gamma=0.0,
                 min_child_weight=1.0, min_child_samples=1, subsample=1.0, colsample_bytree=1.0,
                 colsample_bynode=1.0, max_bins=MAX_BINS, categorical_features="from_dtype",
                 cat_smooth=3.0, cat_l2=0.0, min_data_per_group=1, max_cat_threshold=32,
                 max_cat_to_onehot=4, base_score=None,
                 early_stopping_rounds=None, validation_fraction=0.1, random_state=None,
                 n_jobs=None, verbose=0):
        self.loss = loss
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.max_depth = max_depth
        self.max_leaves = max_leaves
        self.grow_policy = grow_policy
        self.reg_lambda = reg_lambda
        self.reg_alpha = reg_alpha
        self.gamma = gamma
        self.min_child_weight = min_child_weight
        self.min_child_samples = min_child_samples
        self.subsample = subsample
        self.colsample_bytree = colsample_bytree
        self.colsample_bynode = colsample_bynode
        self.max_bins = max_bins
        self.categorical_features = categorical_features
        self.cat_smooth = cat_smooth
        self.cat_l2 = cat_l2
        self.min_data_per_group = min_data_per_group
        self.max_cat_threshold = max_cat_threshold
        self.max_cat_to_onehot = max_cat_to_onehot
        self.base_score = base_score
        self.early_stopping_rounds = early_stopping_rounds
        self.validation_fraction = validation_fraction
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    def _tree_params(self) -> TreeParams:
        return TreeParams(
            grow_policy=self.grow_policy, max_depth=self.max_depth, max_leaves=self.max_leaves,
            reg_lambda=self.reg_lambda, reg_alpha=self.reg_alpha, gamma=self.gamma,
            min_child_weight=self.min_child_weight, min_child_samples=self.min_child_samples,
            min_split_gain=XGBOOST_MIN_SPLIT_GAIN, colsample_bytree=self.colsample_bytree,
            colsample_bynode=self.colsample_bynode, cat_smooth=self.cat_smooth,
            cat_l2=self.cat_l2, min_data_per_group=self.min_data_per_group,
            max_cat_threshold=self.max_cat_threshold, max_cat_to_onehot=self.max_cat_to_onehot)


@numpydoc_sections(GBT, BOOSTING_ATTRIBUTES | EARLY_STOPPING_ATTRIBUTES,
                   ("csc411", "chen2016", "friedman2001"))
class GradientBoostingRegressor(RegressorMixin, _BaseGBT):
    """Regularized gradient-boosted trees for regression (XGBoost's second-order objective).

    Round m grows one tree per output on the gradients g and hessians h of the loss at the
    current raw scores F, with leaf weights w* = -T_alpha(G) / (H + lambda) and split gain
    S(left) + S(right) - S(parent), S = T_alpha(G)^2 / (H + lambda), and adds it with shrinkage,
    F <- F + eta f_m [1]_ [2]_. Parameters have XGBoost's names and meaning. The prediction is
    the loss's output of F (exp F for poisson, F otherwise); absolute, huber and quantile refit
    each leaf on the loss itself, as MART does [3]_.

    Examples
    --------
    A median regression: the middle of 1, 2, 3 left and of 9, 10, 11 right:

    >>> import numpy as np
    >>> from ensembles import GradientBoostingRegressor
    >>> X = np.arange(100.0).reshape(-1, 1)
    >>> y = np.where(X[:, 0] < 50, 1.0, 9.0) + np.arange(100) % 3
    >>> median = GradientBoostingRegressor(loss="quantile", quantile_alpha=0.5, n_estimators=20)
    >>> median.fit(X, y).predict([[10.0], [90.0]]).round(1)
    array([ 2., 10.])
    """

    def __init__(self, *, loss="squared", quantile_alpha=0.5, huber_delta=1.0,
                 n_estimators=100, learning_rate=0.3, max_depth=6, max_leaves=0,
                 grow_policy="depthwise", reg_lambda=1.0, reg_alpha=0.0, gamma=0.0,
                 min_child_weight=1.0, min_child_samples=1, subsample=1.0, colsample_bytree=1.0,
                 colsample_bynode=1.0, max_bins=MAX_BINS, categorical_features="from_dtype",
                 cat_smooth=3.0, cat_l2=0.0, min_data_per_group=1, max_cat_threshold=32,
                 max_cat_to_onehot=4, base_score=None,
                 early_stopping_rounds=None, validation_fraction=0.1, random_state=None,
                 n_jobs=None, verbose=0):
        super().__init__(
            loss=loss, n_estimators=n_estimators, learning_rate=learning_rate,
            max_depth=max_depth, max_leaves=max_leaves, grow_policy=grow_policy,
            reg_lambda=reg_lambda, reg_alpha=reg_alpha, gamma=gamma,
            min_child_weight=min_child_weight, min_child_samples=min_child_samples,
            subsample=subsample, colsample_bytree=colsample_bytree,
            colsample_bynode=colsample_bynode, max_bins=max_bins,
            categorical_features=categorical_features, cat_smooth=cat_smooth, cat_l2=cat_l2,
            min_data_per_group=min_data_per_group, max_cat_threshold=max_cat_threshold,
            max_cat_to_onehot=max_cat_to_onehot, base_score=base_score,
            early_stopping_rounds=early_stopping_rounds, validation_fraction=validation_fraction,
            random_state=random_state, n_jobs=n_jobs, verbose=verbose)
        self.quantile_alpha = quantile_alpha
        self.huber_delta = huber_delta

    def fit(self, X, y, sample_weight=None):
        X, y, sample_weight = validate_training_data(self, X, y, sample_weight)
        y = validate_regression_target(y)
        if self.loss not in REGRESSION_LOSSES:
            raise ValueError(f"loss {self.loss!r} is not a regression loss; choose one of: "
                             f"{', '.join(REGRESSION_LOSSES)}")
        params = {"quantile": {"alpha": self.quantile_alpha},
                  "huber": {"delta": self.huber_delta}}.get(self.loss, {})
        self._loss = make_loss(self.loss, **params)
        self._loss.check_target(y)
        return self._boost(X, y, sample_weight, self._loss, 1)

    def predict(self, X):
        raw = self._raw_predict(X)
        return self._loss.output(raw)

    def staged_predict(self, X):
        for raw in self._staged_raw_predict(X):
            yield self._loss.output(raw)


@numpydoc_sections(GBT_CLASSIFIER, BOOSTING_ATTRIBUTES | CLASSES | EARLY_STOPPING_ATTRIBUTES,
                   ("csc411", "chen2016"))
class GradientBoostingClassifier(LossClassifierOutputs, ClassifierMixin, _BaseGBT):
    """Regularized gradient-boosted trees for classification (XGBoost's second-order objective).

    Round m grows one tree per output on the gradients g and hessians h of the loss at the
    current raw scores F, with leaf weights w* = -T_alpha(G) / (H + lambda) and split gain
    S(left) + S(right) - S(parent), S = T_alpha(G)^2 / (H + lambda), and adds it with shrinkage,
    F <- F + eta f_m [1]_ [2]_. Parameters have XGBoost's names and meaning. Two classes:
    p(1 | x) = sigmoid(F) (logistic); K classes: p(k | x) = softmax(F)_k, one tree per class per
    round.

    Examples
    --------
    Early stopping keeps the rounds up to the best validation loss:

    >>> from sklearn.datasets import load_breast_cancer
    >>> from ensembles import GradientBoostingClassifier
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> gbt = GradientBoostingClassifier(learning_rate=0.1, early_stopping_rounds=5, random_state=0)
    >>> gbt.fit(X[:100], y[:100]).n_estimators_
    20
    """

    def fit(self, X, y, sample_weight=None):
        X, y, sample_weight = validate_training_data(self, X, y, sample_weight)
        self.classes_, codes = encode_classes(y)
        n_classes = len(self.classes_)
        name = self.loss if self.loss is not None else (
            "logistic" if n_classes == 2 else "softmax")
        if name not in CLASSIFICATION_LOSSES:
            raise ValueError(f"loss {name!r} is not a classification loss; choose one of: "
                             f"{', '.join(CLASSIFICATION_LOSSES)}")
        self._loss = make_loss(name)
        if n_classes > 2 and "multiclass" not in self._loss.tasks:
            raise ValueError(f"loss {name!r} is binary but y has {n_classes} classes; "
                             "use loss='softmax'")
        return self._boost(X, codes, sample_weight, self._loss, self._loss.n_outputs(n_classes),
                           stratify=codes)

    def decision_function(self, X):
        raw = self._raw_predict(X)
        return raw[:, 0] if raw.shape[1] == 1 else raw

