"""Input checks at the edge of every estimator: scikit-learn's validators, plus our messages."""

import numpy as np
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, validate_data

from ensembles.methods.categorical import encode_for_fit, encode_for_predict


def validate_training_data(estimator, X, y, sample_weight):
    """X as float64 (NaN allowed as missing, inf refused), y 1-d, weights >= 0 summing to
    more than 0; no weights are unit weights, a read-only view of one float (not n of them).
    An estimator with `categorical_features` gets its pandas category columns as codes
    (categorical.encode_for_fit)."""
    if hasattr(estimator, "categorical_features"):
        X = encode_for_fit(estimator, X)
    X, y = validate_data(estimator, X, y, dtype=np.float64, ensure_all_finite="allow-nan",
                         y_numeric=False, multi_output=False)
    if sample_weight is None:
        return X, y, np.broadcast_to(1.0, X.shape[0])
    sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64,
                                         ensure_non_negative=True)
    if not sample_weight.sum() > 0:
        raise ValueError("sample_weight sums to zero; at least one sample needs a positive weight")
    return X, y, sample_weight


def check_tree_size(estimator) -> None:
    """max_depth None (no limit) or an int >= 1, max_leaf_nodes None (no limit) or an int >= 2,
    as scikit-learn's trees take them."""
    if estimator.max_depth is not None and not estimator.max_depth >= 1:
        raise ValueError(f"max_depth must be None or an int >= 1, got {estimator.max_depth!r}")
    if estimator.max_leaf_nodes is not None and not estimator.max_leaf_nodes >= 2:
        raise ValueError(f"max_leaf_nodes must be None or an int >= 2, got "
                         f"{estimator.max_leaf_nodes!r}")


def encode_classes(y):
    """classes_ and y as integer codes 0..K-1 of the smallest signed type that holds them
    (int8 up to 128 classes); a single class is refused. The codes are looked up in the
    sorted classes: np.unique's return_inverse argsorts y, 0.13 s of 800k labels (a 30th of a
    GBT fit), the lookup 10 ms."""
    check_classification_targets(y)
    classes = np.unique(y)
    codes = np.searchsorted(classes, y)
    if len(classes) < 2:
        raise ValueError(f"a classifier needs at least two classes; y has one class only: "
                         f"{classes[0]!r}")
    return classes, codes.astype(np.min_scalar_type(-len(classes)))


def validate_regression_target(y):
    y = np.asarray(y, dtype=np.float64)
    if not np.all(np.isfinite(y)):
        raise ValueError("y contains NaN or inf; regression targets must be finite")
    return y


def validate_prediction_data(estimator, X):
    """X as in fit: float64, NaN allowed, category columns as fit's codes, and the values of
    categorical features the bin mapper maps (binning) as their codes."""
    X = encode_for_predict(estimator, X)
    X = validate_data(estimator, X, dtype=np.float64, ensure_all_finite="allow-nan",
                      reset=False)
    bin_mapper = getattr(estimator, "_bin_mapper", None)
    return X if bin_mapper is None else bin_mapper.raw_categories(X)


def resolve_max_features(max_features, n_features: int) -> int:
    """scikit-learn's meaning: "sqrt", "log2", None (all), an int count or a float fraction."""
    if max_features is None:
        return n_features
    if isinstance(max_features, str):
        if max_features == "sqrt":
            return max(1, int(np.sqrt(n_features)))
        if max_features == "log2":
            return max(1, int(np.log2(n_features)))
        raise ValueError(f"unknown max_features {max_features!r}; choose one of: 'sqrt', "
                         "'log2', None, an int or a float in (0, 1]")
    if isinstance(max_features, (int, np.integer)) and not isinstance(max_features, bool):
        if not 1 <= max_features <= n_features:
            raise ValueError(f"max_features={max_features} must be in [1, {n_features}]")
        return int(max_features)
    if isinstance(max_features, (float, np.floating)) and 0.0 < max_features <= 1.0:
        return max(1, int(max_features * n_features))
    raise ValueError(f"max_features={max_features!r} must be 'sqrt', 'log2', None, an int "
                     "or a float in (0, 1]")
