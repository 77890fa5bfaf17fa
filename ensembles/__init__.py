"""Ensemble methods on an in-house numba tree engine, as scikit-learn estimators."""

from ensembles.methods.forest import RandomForestClassifier, RandomForestRegressor
from ensembles.methods.gbt import GradientBoostingClassifier, GradientBoostingRegressor

__all__ = [
    "GradientBoostingClassifier",
    "GradientBoostingRegressor",
    "RandomForestClassifier",
    "RandomForestRegressor",
]
