"""Diversity of an ensemble of independently fitted members on a test set.

Oracle outputs c_m(x) = 1[member m is right on x]. Over a pair (i, k), N^ab counts the samples
with c_i = a and c_k = b; disagreement D = (N^01 + N^10) / N and Yule's
Q = (N^11 N^00 - N^01 N^10) / (N^11 N^00 + N^01 N^10), each averaged over the pairs (Kuncheva
and Whitaker 2003, "Measures of diversity in classifier ensembles", Machine Learning 51).
Breiman (2001, section 2.2): raw margin rmg_m(x) = 1[h_m = y] - 1[h_m = j-hat], margin function
mr = mean_m rmg_m, strength s = E_x mr, rho-bar the mean correlation of rmg between members;
the vote's error PE* <= rho-bar (1 - s^2) / s^2 (Theorem 2.3).
"""

import numpy as np
from scipy.stats import binom
from sklearn.base import BaseEstimator

from experiments.analyses.findings import Findings, FittedSplit
from experiments.analyses.member_votes import (
    class_votes,
    has_independent_members,
    member_labels,
    true_class_margin,
)

MAX_PAIR_MEMBERS = 200  # pairwise measures use the first members (exchangeable, i.i.d. draws)


def pair_counts(correct: np.ndarray) -> tuple[np.ndarray, ...]:
    """N^11, N^00, N^10, N^01 as (M, M) matrices from the (M, n) oracle outputs."""
    right = correct.astype(float)
    wrong = 1.0 - right
    return right @ right.T, wrong @ wrong.T, right @ wrong.T, wrong @ right.T


def disagreement(correct: np.ndarray) -> float:
    """Mean over pairs i < k of D_ik = (N^01 + N^10) / N."""
    n11, n00, n10, n01 = pair_counts(correct)
    upper = np.triu_indices(len(correct), k=1)
    return float(np.mean((n01 + n10)[upper] / correct.shape[1]))


def q_statistic(correct: np.ndarray) -> float:
    """Mean over pairs i < k of Yule's Q_ik; pairs with N^11 N^00 + N^01 N^10 = 0 (Q undefined,
    e.g. two members right everywhere) are left out; NaN if every pair is."""
    n11, n00, n10, n01 = pair_counts(correct)
    upper = np.triu_indices(len(correct), k=1)
    agree, differ = (n11 * n00)[upper], (n01 * n10)[upper]
    defined = agree + differ > 0
    if not defined.any():
        return float("nan")
    return float(np.mean((agree - differ)[defined] / (agree + differ)[defined]))


def strength_correlation(labels: np.ndarray, y_index: np.ndarray, n_classes: int) -> tuple:
    """Breiman's (s, rho-bar) from the members' labels: j-hat(x) = argmax_{j != y} of the vote
    shares, rmg (M, n) the raw margins, mr their mean over members, s = mean_x mr and
    rho-bar = sum_{i != k} cov(rmg_i, rmg_k) / sum_{i != k} sd_i sd_k (covariances over the
    test samples), using sum_{i,k} cov = M^2 var(mr) and removing the diagonal i = k."""
    _, runner_up = true_class_margin(class_votes(labels, n_classes), y_index)
    raw_margin = (labels == y_index).astype(float) - (labels == runner_up).astype(float)
    margin = raw_margin.mean(axis=0)
    n_members = len(labels)
    sd = raw_margin.std(axis=1)
    covariance_off = n_members**2 * margin.var() - np.sum(sd**2)
    sd_products_off = np.sum(sd) ** 2 - np.sum(sd**2)
    rho = covariance_off / sd_products_off if sd_products_off > 0 else float("nan")
    return float(margin.mean()), float(rho)


def breiman_bound(strength: float, correlation: float) -> float:
    """PE* <= rho-bar (1 - s^2) / s^2 (Breiman 2001, Theorem 2.3); NaN unless s > 0."""
    if not strength > 0:
        return float("nan")
    return correlation * (1.0 - strength**2) / strength**2


def binomial_vote_error(n_members: int, member_error: float) -> float:
    """Error of a majority vote of n independent members each wrong with probability e:
    P(Bin(n, e) > n/2) + P(Bin(n, e) = n/2) / 2 (a tie broken at random); the two-class
    "wisdom of crowds" argument of ESL section 8.7, an upper bound for more classes, where a
    wrong majority may split its votes."""
    tail = binom.sf(n_members // 2, n_members, member_error)
    if n_members % 2 == 0:
        tail += 0.5 * binom.pmf(n_members // 2, n_members, member_error)
    return float(tail)


def diversity_scores(model: BaseEstimator, X_test: np.ndarray, y_test: np.ndarray) -> dict:
    """div_* metrics of a fitted ensemble of independent members (bagging, random forests,
    extra trees; at least 2 members) on the test set: each member's predicted class, voted
    with equal weights. {} for any other model: boosting's rounds (every AdaBoost algorithm,
    LogitBoost, GBT) are fitted in sequence and voted with unequal weights or added as real
    scores, so the equal-vote measures here (Breiman's bound, the binomial vote error) do not
    describe their combination; their margins (margins.py) do."""
    if not has_independent_members(model) or len(model.estimators_) < 2:
        return {}
    labels = member_labels(model, X_test)
    n_classes = len(model.classes_)
    y_index = np.searchsorted(model.classes_, y_test)
    correct = labels == y_index
    strength, correlation = strength_correlation(labels, y_index, n_classes)
    member_error = float(1.0 - correct.mean())
    vote = np.argmax(class_votes(labels, n_classes), axis=1)
    return {
        "div_disagreement": disagreement(correct[:MAX_PAIR_MEMBERS]),
        "div_q": q_statistic(correct[:MAX_PAIR_MEMBERS]),
        "div_strength": strength,
        "div_correlation": correlation,
        "div_breiman_bound": breiman_bound(strength, correlation),
        "div_vote_error": float(np.mean(vote != y_index)),
        "div_member_error": member_error,
        "div_binomial_vote_error": binomial_vote_error(len(labels), member_error),
    }


def diversity_findings(model: BaseEstimator, split: FittedSplit) -> Findings:
    """The per-split hook: diversity_scores on the split's test rows."""
    return Findings(metrics=diversity_scores(model, split.X_test, split.y_test))
