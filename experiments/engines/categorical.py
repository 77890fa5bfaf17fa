"""dataset.categorical=native: every engine is told which columns are categorical, in its own
words, so that it splits them into sets of categories (the columns hold category codes
0..K-1, NaN for missing):

    ensembles, HistGradientBoosting   categorical_features=[columns]
    XGBoost (XGB*, XGBRF*)            enable_categorical=True, feature_types "c" / "q"
    LightGBM                          categorical_column=[columns] (the constructor's alias of
                                      Dataset's categorical_feature)

An estimator without native categorical splits (scikit-learn's forests, bagging, AdaBoost and
GradientBoosting) reads the codes as ordinal numbers, and its run says so in the tag
`approximation`.

GBT's regularization of the set splits (ensembles.engine.categories; LightGBM's names), in each
engine's words (the builders pass them; a GBT run on native categories tags what differs):

    ensembles   cat_smooth, cat_l2, min_data_per_group, max_cat_threshold, max_cat_to_onehot
    LightGBM    the same names; its one-hot rule counts bins (num_bin <= max_cat_to_onehot:
                given max_cat_to_onehot - 1), its counts are estimated from the hessians,
                cat_l2 also shrinks the leaf values of a set split, and min_data_per_group also
                spaces the candidate cuts
    XGBoost     max_cat_to_onehot (the same rule); max_cat_threshold + 1 (its scan sends at most
                max_cat_threshold - 1 categories one way); no cat_smooth, cat_l2 or
                min_data_per_group: it orders by G / (H + lambda), every category sorted in
    HistGB      fixed: cat_smooth = 10 (MIN_CAT_SUPPORT), no cat_l2, min_data_per_group or cap,
                no one-hot splits
"""

from omegaconf import DictConfig

from experiments.engines.early_stopping import HoldoutEarlyStopping
from experiments.engines.spec import Built

CATEGORY_SPLIT_PARAMS = ("cat_smooth", "cat_l2", "min_data_per_group", "max_cat_threshold",
                         "max_cat_to_onehot")


def category_split_params(method: DictConfig) -> dict:
    """GBT's set-split regularization by name (ensembles and LightGBM's constructor)."""
    return {name: method[name] for name in CATEGORY_SPLIT_PARAMS}


def lightgbm_category_params(method: DictConfig) -> dict:
    """LightGBM's settings for GBT's set-split regularization (module docstring)."""
    return category_split_params(method) | {
        "max_cat_to_onehot": max(method.max_cat_to_onehot - 1, 1)}


def xgboost_category_params(method: DictConfig) -> dict:
    """XGBoost's settings for GBT's set-split regularization (module docstring)."""
    return {"max_cat_to_onehot": method.max_cat_to_onehot,
            "max_cat_threshold": method.max_cat_threshold + 1}


def category_split_approximation(library: str, method: DictConfig) -> str | None:
    """What a reference's set splits do otherwise than GBT's config says (module docstring);
    None when they do the same."""
    smooth, l2, group = method.cat_smooth, method.cat_l2, method.min_data_per_group
    if library == "xgboost" and (smooth > 0 or l2 > 0 or group > 0):
        return ("categorical splits: xgboost has no cat_smooth, cat_l2 or min_data_per_group "
                "(orders by G/(H+lambda), every category sorted in)")
    if library == "lightgbm":
        return ("categorical splits: lightgbm counts rows from hessians, shrinks a set split's "
                "leaves by cat_l2 too, spaces cuts by min_data_per_group and one-hots by bins")
    if library == "sklearn" and ((smooth, l2, group, method.max_cat_to_onehot) != (10, 0, 0, 0)
                                 or method.max_cat_threshold < 128):
        return ("categorical splits: sklearn's are fixed (cat_smooth 10, no cat_l2, "
                "min_data_per_group, max_cat_threshold or one-hot splits)")
    return None


def with_native_categories(built: Built, columns: tuple[int, ...], n_features: int,
                           method: DictConfig | None = None) -> Built:
    """The built estimator set to split `columns` as categories (nothing to do without them);
    a GBT `method` (its config) adds what the reference's set splits do otherwise."""
    if not columns:
        return built
    estimator = built.estimator
    model = estimator.estimator if isinstance(estimator, HoldoutEarlyStopping) else estimator
    library = type(model).__module__.split(".")[0]
    if "categorical_features" in model.get_params(deep=False):
        model.set_params(categorical_features=list(columns))
    elif library == "xgboost":
        model.set_params(enable_categorical=True,
                         feature_types=["c" if j in columns else "q" for j in range(n_features)])
    elif library == "lightgbm":
        model.set_params(categorical_column=list(columns))
    else:
        note = (f"categorical features as ordinal codes: {type(model).__name__} has no native "
                "categorical splits")
        return Built(estimator, "; ".join(filter(None, [built.approximation, note])))
    if method is None or "cat_smooth" not in method:
        return built
    note = category_split_approximation(library, method)
    return Built(estimator, "; ".join(filter(None, [built.approximation, note])) or None)
