"""The class each member of a fitted classifier ensemble votes for, and the vote shares.

Labels are indices into the ensemble's `classes_`, one row per member, one column per sample.
"""

import numpy as np
from sklearn import ensemble
from sklearn.base import BaseEstimator

from experiments.engines.catalog import Members, classifier_method
from experiments.engines.members import member_outputs


def has_independent_members(model: BaseEstimator) -> bool:
    """Whether `model` is a classifier whose members are fitted independently (its method's
    declaration: bagging, random forests, extra trees) and can be read one by one (in-house and
    scikit-learn engines)."""
    method = classifier_method(model)
    return method is not None and method.members is Members.independent


def member_labels(model: BaseEstimator, X: np.ndarray) -> np.ndarray:
    """(n_members, n_samples) class index each member of `estimators_` predicts: the argmax of
    its output, read through the member's own `classes_` where it has one (scikit-learn's
    forests and bagging fit members on class indices, its AdaBoost on the original labels,
    which are located in the ensemble's `classes_`); in-house trees output every class, and
    an in-house AdaBoost round its class scores h_m (members.member_outputs), whose argmax is
    the class it votes for (SAMME's tree's class, SAMME.R's leaf's most probable class, gentle's
    largest f_mk; two classes: class 1 iff f_m > 0)."""
    labels = []
    for member, output in zip(model.estimators_, member_outputs(model, X), strict=True):
        predicted = np.argmax(output, axis=1)
        if hasattr(member, "classes_"):
            predicted = member.classes_[predicted]
            if isinstance(model, ensemble.AdaBoostClassifier):
                predicted = np.searchsorted(model.classes_, predicted)
        labels.append(predicted.astype(int))
    return np.array(labels)


def class_votes(labels: np.ndarray, n_classes: int) -> np.ndarray:
    """(n_samples, n_classes) share of the members voting for each class."""
    votes = np.zeros((labels.shape[1], n_classes))
    for member in labels:
        votes[np.arange(labels.shape[1]), member] += 1.0
    return votes / len(labels)


def true_class_margin(scores: np.ndarray, y_index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Margin scores[y] - max_{j != y} scores[j] of each sample and the runner-up class j-hat
    that attains the max (Breiman 2001, eq. (2) and section 2.2; Schapire et al. 1998, sec. 4)."""
    rows = np.arange(len(y_index))
    others = scores.astype(float, copy=True)
    others[rows, y_index] = -np.inf
    runner_up = np.argmax(others, axis=1)
    return scores[rows, y_index] - scores[rows, runner_up], runner_up
