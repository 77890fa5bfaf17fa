"""Normalized training margins of AdaBoost and LogitBoost after several numbers of rounds.

AdaBoost, every algorithm: round m adds its vote times its class scores, s_m = v_m h_m(x) in
R^K (experiments.engines.members.member_outputs: SAMME's coded label, SAMME.R's
(K - 1)(log p_k - mean_j log p_j), gentle's f_m, AdaBoost.MH's leaf values c_m), F = sum_m s_m,
and margin = (F_y - max_{k != y} F_k) / sum_m r_m with r_m = max_x (max_k s_mk(x) - min_k s_mk(x))
over the rows scored (a tree fitted on them holds one in each leaf: the range of its
scores; for gentle's K one-vs-rest trees, their joint range on those rows), so that
|s_my - s_mk| <= r_m and the margin is in [-1, 1], > 0 iff x is classified right (ties
aside). SAMME: r_m = alpha_m K / (K - 1) and the margin is the vote-share margin
v_y - max_{k != y} v_k of Schapire, Freund, Bartlett and Lee (1998, "Boosting the margin",
section 4), v_k = sum_m alpha_m [g_m(x) = k] / sum_m alpha_m. Two classes, s_m = (-f_m, f_m):
the margin is y F / sum_m max_x |f_m| (y in {-1, 1}, F = sum_m f_m), the margin of
confidence-rated hypotheses scaled to [-1, 1] (Schapire and Singer 1999, "Improved boosting
algorithms using confidence-rated predictions", Machine Learning 37; FHT 2000's
f_m = 1/2 log(p_1 / p_0) for SAMME.R, the least-squares tree for gentle). A SAMME.R round
with a pure leaf (p clipped at float64 eps) has r_m = (K - 1) log(1 / eps), about 36 (K - 1),
which keeps its margins small.
LogitBoost: the real-valued trees f_m are confidence-rated hypotheses, normalized by their
range as in Schapire and Singer (1999, section 3): with U(x) the sum of the trees' outputs after
M rounds (F = U / 2 for two classes, F_j = (J - 1) / J (U_j - mean_k U_k) for J, Friedman et
al. 2000), margin = y U(x) / sum_m c_m for two classes (y in {-1, 1}) and
(U_y - max_{j != y} U_j) / (2 sum_m c_m) for J, c_m = max |leaf value| of round m's trees; the
margin is then in [-1, 1].
"""

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator

import ensembles
from experiments.analyses.findings import MARGINS_ARTIFACT, Findings, FittedSplit
from experiments.analyses.member_votes import member_labels, true_class_margin
from experiments.engines.catalog import Margins, classifier_method
from experiments.engines.members import member_outputs

ROUND_FRACTIONS = (0.1, 0.5, 1.0)  # of the fitted rounds; Schapire et al. 1998 drew 5, 100, 1000


def round_counts(n_rounds: int) -> list[int]:
    """max(1, round(f n_rounds)) for f in ROUND_FRACTIONS, without repeats, increasing."""
    return sorted({max(1, round(f * n_rounds)) for f in ROUND_FRACTIONS})


def round_scores(model: BaseEstimator, X: np.ndarray) -> list[np.ndarray]:
    """Each round's s_m = v_m h_m(x), (n_samples, K): the in-house rounds' class scores
    (member_outputs) or scikit-learn's SAMME trees' labels coded as h_k = 1 for the label,
    -1 / (K - 1) otherwise (Zhu et al. 2009), times the round's vote."""
    n_classes = len(model.classes_)
    if isinstance(model, ensembles.AdaBoostClassifier):
        scores = list(member_outputs(model, X))
    else:
        scores = [np.where(np.arange(n_classes) == label[:, None], 1.0, -1.0 / (n_classes - 1))
                  for label in member_labels(model, X)]
    votes = np.asarray(model.estimator_weights_, float)[: len(scores)]
    return [vote * score for vote, score in zip(votes, scores, strict=True)]


def adaboost_margins(model: BaseEstimator, X: np.ndarray, y: np.ndarray) -> dict[int, np.ndarray]:
    """{rounds: normalized margins} of a fitted AdaBoost: in-house SAMME, SAMME.R or gentle,
    or scikit-learn's SAMME; (F_y - max_{k != y} F_k) / sum_m r_m (module docstring)."""
    y_index = np.searchsorted(model.classes_, y)
    scores = round_scores(model, X)
    total, scale = 0.0, 0.0
    margins, wanted = {}, set(round_counts(len(scores)))
    for rounds, score in enumerate(scores, start=1):
        total = total + score
        scale += np.max(score.max(axis=1) - score.min(axis=1))
        if rounds in wanted:
            margin = true_class_margin(total, y_index)[0]
            margins[rounds] = margin / scale if scale > 0 else margin  # F = 0 if scale = 0
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


MARGIN_FUNCTIONS = {Margins.votes: adaboost_margins, Margins.trees: logitboost_margins}


def training_margins(model: BaseEstimator, X: np.ndarray, y: np.ndarray) -> pd.DataFrame | None:
    """Long table (rounds, margin) of the training margins of a classifier whose method declares
    them (AdaBoost, LogitBoost: engines.catalog); None for other models."""
    method = classifier_method(model)
    if method is None or method.margins is None:
        return None
    margins = MARGIN_FUNCTIONS[method.margins](model, X, y)
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
