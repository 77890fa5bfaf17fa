"""Engine adapters: one method config, run by the in-house engine or by a reference library.

    catalog.py          one declaration per method: schema, losses, builder per engine, why
                        an engine has none, what the analyses read
    mapping.py          a job's config -> the estimator its method's declaration builds
    spec.py             what a builder reads (Spec) and returns (Built: estimator, approximation)
    library_forests.py  what the rf modes of XGBoost and LightGBM share
    inhouse.py          ensembles' estimators
    sklearn_models.py   scikit-learn: forests, bagging, AdaBoost, GradientBoosting, HistGB
    xgboost_models.py   XGBoost: XGBRF*, XGB* (hist)
    lightgbm_models.py  LightGBM: rf mode, LGBM*
    early_stopping.py   XGBoost and LightGBM stopped on the in-house GBT's validation rows
    members.py          any library's fitted ensemble: its trees, leaves, members and stages

Two engines differ here and nowhere else.
"""

from experiments.engines.mapping import (
    build,
    build_estimator,
    check_takes_missing_values,
    inhouse_class_name,
    openmp_threads,
    with_task_defaults,
)
from experiments.engines.spec import Built, SkippedJob

__all__ = ["Built", "SkippedJob", "build", "build_estimator", "check_takes_missing_values",
           "inhouse_class_name", "openmp_threads", "with_task_defaults"]
