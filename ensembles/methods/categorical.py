"""`categorical_features` as scikit-learn's HistGradientBoosting reads it, and pandas category
columns as the category codes the engine splits on (binning).

categorical_features: "from_dtype" (the columns of pandas dtype "category"; none for an array),
None (none), a boolean mask, integer indices, or column names of a DataFrame. A pandas category
column becomes its codes (missing values NaN), and at prediction a category not seen in fit
becomes NaN: it follows the missing values. A DataFrame column of strings or booleans marked
categorical is read as a category column of its sorted values. A numerical column marked
categorical holds codes; any values are taken (binning maps them to categories).

More than 255 levels (a date, an ID), as users expect from LightGBM: the 254 most frequent
levels keep a category each and the rarer ones share the 255th; a level not seen at fit
follows the missing values (binning's module docstring states the rule).
"""

import numpy as np
import pandas as pd


def encode_for_fit(estimator, X):
    """X with its pandas category columns as codes; sets estimator.is_categorical_ (a bool
    mask, or None without categorical features) and the category levels it saw."""
    mask = _categorical_mask(estimator.categorical_features, X)
    estimator.is_categorical_ = mask
    estimator._category_levels = {}
    if mask is None or not isinstance(X, pd.DataFrame):
        return X
    for j in np.flatnonzero(mask):
        column = X.iloc[:, j]
        if isinstance(column.dtype, pd.CategoricalDtype):
            estimator._category_levels[j] = column.cat.categories
        elif not pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column):
            estimator._category_levels[j] = _sorted_levels(column, X.columns[j])
    return _as_codes(X, estimator._category_levels)


def _sorted_levels(column: pd.Series, name) -> pd.Index:
    """The sorted distinct values of a column of labels; values that do not sort together
    (strings and numbers) are refused, naming the column."""
    try:
        return pd.Index(column.dropna().unique()).sort_values()
    except TypeError:
        kinds = sorted({type(value).__name__ for value in column.dropna()})
        raise ValueError(
            f"categorical feature {name!r} mixes values of types {', '.join(kinds)}; make them "
            f"one type (e.g. frame[{name!r}].astype(str)) or give the column the pandas dtype "
            "'category'") from None


def encode_for_predict(estimator, X):
    """X with the category columns of fit as codes of fit's categories (unseen: NaN)."""
    levels = getattr(estimator, "_category_levels", None)
    if not levels or not isinstance(X, pd.DataFrame):
        return X
    return _as_codes(X, levels)


def _as_codes(frame: pd.DataFrame, levels: dict) -> pd.DataFrame:
    frame = frame.copy()
    for j, categories in levels.items():
        codes = categories.get_indexer(frame.iloc[:, j].astype(object))  # -1: NaN or unseen
        frame.isetitem(j, np.where(codes < 0, np.nan, codes.astype(np.float64)))
    return frame


def _categorical_mask(categorical_features, X) -> np.ndarray | None:
    """The bool mask of categorical columns, or None when there are none."""
    if categorical_features is None:
        return None
    if isinstance(categorical_features, str):
        if categorical_features != "from_dtype":
            raise ValueError(f"categorical_features={categorical_features!r}: use "
                             "'from_dtype', None, a boolean mask, indices or column names")
        if not isinstance(X, pd.DataFrame):
            return None
        mask = np.array([isinstance(dtype, pd.CategoricalDtype) for dtype in X.dtypes])
        return mask if mask.any() else None
    given = np.asarray(categorical_features)
    if given.size == 0:
        return None
    n_features = np.shape(X)[1] if np.ndim(X) == 2 else 0
    if given.dtype.kind == "b":
        if given.shape != (n_features,):
            raise ValueError(f"categorical_features as a mask needs {n_features} entries, got "
                             f"{given.shape[0]}")
        return given.copy() if given.any() else None
    if given.dtype.kind in "US":
        if not isinstance(X, pd.DataFrame):
            raise ValueError("categorical_features by name needs X as a pandas DataFrame")
        unknown = sorted(set(given) - set(X.columns))
        if unknown:
            raise ValueError(f"categorical_features names unknown columns: {unknown}")
        given = np.flatnonzero(np.isin(X.columns, given))
    if given.dtype.kind not in "iu" or given.min() < 0 or given.max() >= n_features:
        raise ValueError(f"categorical_features indices must be in [0, {n_features - 1}], "
                         f"got {categorical_features!r}")
    mask = np.zeros(n_features, dtype=np.bool_)
    mask[given] = True
    return mask
