"""Ensemble methods on an in-house numba tree engine, as scikit-learn estimators."""

from ensembles.methods.forest import (
    BaggingClassifier,
    BaggingRegressor,
    ExtraTreesClassifier,
    ExtraTreesRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from ensembles.methods.gbt import GradientBoostingClassifier, GradientBoostingRegressor

__all__ = [
    "BaggingClassifier",
    "BaggingRegressor",
    "ExtraTreesClassifier",
    "ExtraTreesRegressor",
    "GradientBoostingClassifier",
    "GradientBoostingRegressor",
    "RandomForestClassifier",
    "RandomForestRegressor",
]
