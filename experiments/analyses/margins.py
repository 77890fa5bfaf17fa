"""Normalized training margins of AdaBoost and LogitBoost after several numbers of rounds.

AdaBoost (Schapire, Freund, Bartlett and Lee 1998, "Boosting the margin", section 4 for K
classes): with vote shares v_k(x) = sum_m alpha_m [h_m(x) = k] / sum_m alpha_m, the margin is
v_y - max_{k != y} v_k in [-1, 1]; for two classes y f(x) / sum_m |alpha_m| with
f = sum_m alpha_m h_m, h_m in {-1, 1}.
LogitBoost: the real-valued trees f_m are confidence-rated hypotheses, normalized by their
range as in Schapire and Singer (1999, section 3): with U(x) the sum of the trees' outputs after
M rounds (F = U / 2 for two classes, F_j = (J - 1) / J (U_j - mean_k U_k) for J, Friedman et
al. 2000), margin = y U(x) / sum_m c_m for two classes (y in {-1, 1}) and
(U_y - max_{j != y} U_j) / (2 sum_m c_m) for J, c_m = max |leaf value| of round m's trees; the
margin is then in [-1, 1].
"""

import numpy as np
import pandas as pd
from sklearn import ensemble
from sklearn.base import BaseEstimator

import ensembles
from experiments.analyses.findings import Findings, FittedSplit
from experiments.analyses.member_votes import member_labels, true_class_margin

MARGINS_ARTIFACT = "margins.csv"
ROUND_FRACTIONS = (0.1, 0.5, 1.0)  # of the fitted rounds; Schapire et al. 1998 drew 5, 100, 1000


def round_counts(n_rounds: int) -> list[int]:
    """max(1, round(f n_rounds)) for f in ROUND_FRACTIONS, without repeats, increasing."""
    return sorted({max(1, round(f * n_rounds)) for f in ROUND_FRACTIONS})


def adaboost_margins(model: BaseEstimator, X: np.ndarray, y: np.ndarray) -> dict[int, np.ndarray]:
    """{rounds: normalized margins} of a fitted SAMME AdaBoost (in-house or scikit-learn)."""
    labels = member_labels(model, X)
    alphas = np.asarray(model.estimator_weights_, float)[: len(labels)]
    y_index = np.searchsorted(model.classes_, y)
    votes = np.zeros((X.shape[0], len(model.classes_)))
    margins, wanted = {}, set(round_counts(len(labels)))
    for rounds, (member, alpha) in enumerate(zip(labels, alphas, strict=True), start=1):
        votes[np.arange(X.shape[0]), member] += alpha
        if rounds in wanted:
            margins[rounds] = true_class_margin(votes / alphas[:rounds].sum(), y_index)[0]
    return margins


def logitboost_margins(
    model: BaseEstimator, X: np.ndarray, y: np.ndarray
) -> dict[int, np.ndarray]:
    """{rounds: normalized margins} of a fitted in-house LogitBoost (F_0 = 0)."""
    y_index = np.searchsorted(model.classes_, y)
    outputs = np.zeros((X.shape[0], len(model.init_raw_)))
    scale = 0.0
    margins, wanted = {}, set(round_counts(len(model.trees_)))
    for rounds, round_trees in enumerate(model.trees_, start=1):
        for k, tree in enumerate(round_trees):
            outputs[:, k] += tree.predict(X)[:, 0]
        scale += max(np.abs(tree.value).max() for tree in round_trees)
        if rounds in wanted:
            if outputs.shape[1] == 1:
                margins[rounds] = np.where(y_index == 1, 1.0, -1.0) * outputs[:, 0] / scale
            else:
                margins[rounds] = true_class_margin(outputs, y_index)[0] / (2.0 * scale)
    return margins


MARGIN_FUNCTIONS = {
    ensembles.AdaBoostClassifier: adaboost_margins,
    ensemble.AdaBoostClassifier: adaboost_margins,
    ensembles.LogitBoostClassifier: logitboost_margins,
}


def training_margins(model: BaseEstimator, X: np.ndarray, y: np.ndarray) -> pd.DataFrame | None:
    """Long table (rounds, margin) of the training margins of AdaBoost or LogitBoost; None for
    other models."""
    margin_function = MARGIN_FUNCTIONS.get(type(model))
    if margin_function is None:
        return None
    margins = margin_function(model, X, y)
    return pd.DataFrame(
        {
            "rounds": np.repeat(list(margins), [len(m) for m in margins.values()]),
            "margin": np.concatenate(list(margins.values())),
        }
    )


def margin_findings(model: BaseEstimator, split: FittedSplit) -> Findings:
    """The per-split hook: the training margins of the first split as the table margins.csv."""
    if split.index != 0:
        return Findings()
    margins = training_margins(model, split.X_train, split.y_train)
    return Findings() if margins is None else Findings(tables={MARGINS_ARTIFACT: margins})
