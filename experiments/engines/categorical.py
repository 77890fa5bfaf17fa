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
"""

from experiments.engines.early_stopping import HoldoutEarlyStopping
from experiments.engines.spec import Built


def with_native_categories(built: Built, columns: tuple[int, ...], n_features: int) -> Built:
    """The built estimator set to split `columns` as categories (nothing to do without them)."""
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
    return built
