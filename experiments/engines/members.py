"""What a fitted ensemble is made of, whichever library fitted it: its trees and their leaves,
and the outputs of its members one by one (the running mean of which is an averaging
ensemble's learning curve)."""

import sys
from collections.abc import Iterator

import numpy as np
from sklearn.base import BaseEstimator, is_classifier

from ensembles.engine.tree import Tree
from ensembles.methods.adaboost import AdaBoostClassifier
from ensembles.methods.adaboost_rounds import round_algorithm

MEMBER_CHUNK_VALUES = 1 << 22  # in-house member outputs computed at once: 32 MB of float64


def is_library_model(model: BaseEstimator, library: str, base_class: str) -> bool:
    """Whether the model is a `library.base_class`, without importing a library not loaded."""
    module = sys.modules.get(library)
    return module is not None and isinstance(model, getattr(module, base_class))


def leaves_per_tree(model: BaseEstimator) -> list[int]:
    """The number of leaves of every tree of the model (all classes' trees of a round).
    XGBoost and LightGBM are read from their model dumps, scikit-learn from its trees."""
    model = getattr(model, "library_model_", model)  # unwrap HoldoutEarlyStopping
    if is_library_model(model, "xgboost", "XGBModel"):
        return [tree.count("leaf=") for tree in model.get_booster().get_dump()]
    if is_library_model(model, "lightgbm", "LGBMModel"):
        return [tree["num_leaves"] for tree in model.booster_.dump_model()["tree_info"]]
    if hasattr(model, "_predictors"):  # scikit-learn's HistGradientBoosting*: rounds x classes
        return [tree.get_n_leaf_nodes() for trees in model._predictors for tree in trees]
    members = getattr(model, "trees_", None) or getattr(model, "estimators_", None)
    if members is None:
        return []
    trees = np.asarray(members, dtype=object).ravel()  # boosting rounds x outputs, flattened
    return [tree.n_leaves if isinstance(tree, Tree) else tree.get_n_leaves() for tree in trees]


def size_metrics(model: BaseEstimator) -> dict[str, float]:
    """n_trees and n_leaves (summed over trees) of a tree ensemble; empty for other models."""
    leaves = leaves_per_tree(model)
    return {"n_trees": len(leaves), "n_leaves": int(sum(leaves))} if leaves else {}


def averaged_members(model: BaseEstimator) -> bool:
    """Whether the model averages independent members it exposes (bagging, forests)."""
    return not hasattr(model, "staged_predict") and hasattr(model, "estimators_")


def member_outputs(model: BaseEstimator, X: np.ndarray) -> Iterator[np.ndarray]:
    """Each member's output on X, (n_samples, n_outputs): class probabilities (or in-house
    leaf class frequencies) for a classifier, predictions for a regressor. A member of the
    in-house AdaBoost is a round (one tree, or gentle's K one-vs-rest trees) and its output
    the round's class scores h_m (n_samples, K) before its vote (adaboost_rounds): SAMME's
    coded label (1 for the tree's class, -1 / (K - 1) otherwise), SAMME.R's
    (K - 1)(log p_k - mean_j log p_j), gentle's (-f_m, f_m) or (f_m1 .. f_mK), AdaBoost.MH's
    leaf values (c_m1 .. c_mK); its argmax is the class the round votes for. Members of a
    scikit-learn bagging ensemble see only their own features (`estimators_features_`). An
    in-house forest gives a chunk of its trees per pass over X: a parallel kernel call per tree
    was most of what the diversity analysis and the learning curve of a small job took."""
    if isinstance(model, AdaBoostClassifier):
        n_classes = len(model.classes_)
        algorithm = round_algorithm(model.algorithm, model.multiclass, n_classes)
        for member in model.estimators_:
            yield algorithm.scores(member, X, n_classes)
        return
    if hasattr(model, "tree_outputs"):
        n_values = X.shape[0] * model.estimators_[0].value.shape[1]
        chunk = max(1, MEMBER_CHUNK_VALUES // max(n_values, 1))
        for first in range(0, len(model.estimators_), chunk):
            yield from model.tree_outputs(X, first, first + chunk)
        return
    features = getattr(model, "estimators_features_", None)
    for index, member in enumerate(model.estimators_):
        rows = X if features is None else X[:, features[index]]
        if isinstance(member, Tree):
            yield member.predict(rows)
        elif is_classifier(model):
            yield member.predict_proba(rows)
        else:
            yield member.predict(rows).reshape(-1, 1)


def staged_predictions(model: BaseEstimator, X: np.ndarray) -> Iterator[np.ndarray]:
    """Predictions after each round (boosting's staged_predict) or after each added member of
    an averaging ensemble (the running mean of the members' outputs, as the model predicts:
    the most probable class, or the mean); nothing for a model with neither."""
    if hasattr(model, "staged_predict"):
        yield from model.staged_predict(X)
        return
    if not averaged_members(model):
        return
    total = 0.0
    for n_members, output in enumerate(member_outputs(model, X), start=1):
        total = total + output
        if is_classifier(model):
            yield model.classes_[np.argmax(total, axis=1)]
        else:
            yield total[:, 0] / n_members


def curve_points(
    model: BaseEstimator, X: np.ndarray, every: int
) -> Iterator[tuple[int, np.ndarray]]:
    """(rounds, predictions) after round 1, every `every` rounds and the last round the model
    predicts with (the best one, after early stopping). XGBoost and LightGBM predict with their
    first r rounds (iteration_range, num_iteration); the others give staged predictions."""
    model = getattr(model, "library_model_", model)  # unwrap HoldoutEarlyStopping
    if is_library_model(model, "xgboost", "XGBModel"):
        n_rounds = model.get_booster().num_boosted_rounds()
        if model.get_params()["early_stopping_rounds"]:
            n_rounds = model.best_iteration + 1  # the rounds that predict uses
        for rounds in _curve_rounds(n_rounds, every):
            yield rounds, model.predict(X, iteration_range=(0, rounds))
        return
    if is_library_model(model, "lightgbm", "LGBMModel"):
        n_rounds = model.best_iteration_ or model.booster_.current_iteration()
        for rounds in _curve_rounds(n_rounds, every):
            yield rounds, model.predict(X, num_iteration=rounds)
        return
    rounds, predictions = 0, None
    for rounds, predictions in enumerate(staged_predictions(model, X), start=1):
        if rounds == 1 or rounds % every == 0:
            yield rounds, predictions
    if rounds > 1 and rounds % every != 0:
        yield rounds, predictions


def _curve_rounds(n_rounds: int, every: int) -> list[int]:
    """1, every, 2 every, ... and n_rounds; none for a single round (a library's forest)."""
    return sorted({1, *range(every, n_rounds + 1, every), n_rounds}) if n_rounds > 1 else []
