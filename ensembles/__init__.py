"""Ensemble methods on an in-house numba tree engine, as scikit-learn estimators."""

from ensembles.methods.forest import RandomForestClassifier, RandomForestRegressor

__all__ = ["RandomForestClassifier", "RandomForestRegressor"]
