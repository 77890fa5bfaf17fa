"""Ensemble methods on an in-house numba tree engine, as scikit-learn estimators."""

from ensembles.methods.adaboost import AdaBoostClassifier
from ensembles.methods.forest import (
    BaggingClassifier,
    BaggingRegressor,
    ExtraTreesClassifier,
    ExtraTreesRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from ensembles.methods.gbt import GradientBoostingClassifier, GradientBoostingRegressor
from ensembles.methods.l2boost import L2BoostClassifier, L2BoostRegressor
from ensembles.methods.logitboost import LogitBoostClassifier

__all__ = [
    "AdaBoostClassifier",
    "BaggingClassifier",
    "BaggingRegressor",
    "ExtraTreesClassifier",
    "ExtraTreesRegressor",
    "GradientBoostingClassifier",
    "GradientBoostingRegressor",
    "L2BoostClassifier",
    "L2BoostRegressor",
    "LogitBoostClassifier",
    "RandomForestClassifier",
    "RandomForestRegressor",
]
