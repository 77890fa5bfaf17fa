"""One round of each AdaBoost: the engine tree(s) it grows on the rows' weights w, its vote,
its weighted error, the next weights, and its member's class scores h (n_samples, K).

- SAMME (Zhu, Zou, Rosset and Hastie 2009, "Multi-class AdaBoost", Algorithm 2): a weighted
  Gini tree g, err = sum_i w_i [g(x_i) != y_i], vote alpha = eta (log((1 - err) / err)
  + log(K - 1)), w_i <- w_i exp(alpha [g(x_i) != y_i]); h_k = 1 if g(x) = k else -1 / (K - 1).
- SAMME.R (the same paper, Algorithm 4; for K = 2 Real AdaBoost, Friedman, Hastie and
  Tibshirani 2000, "Additive logistic regression", Algorithm 2): the weighted Gini tree's leaf
  class frequencies p, clipped below at float64 eps as scikit-learn < 1.6 did, give
  h_k = (K - 1)(log p_k - 1/K sum_j log p_j) and w_i <- w_i exp(-eta (K - 1) / K y_i^T log p(x_i))
  with y_ik = 1 for the true class, -1 / (K - 1) otherwise; vote 1, eta in the weights only (as
  scikit-learn). For K = 2, h_1 = -h_0 = 1/2 log(p_1 / p_0) = FHT's f (h_1 - h_0 = 2 f), and
  the weights become w exp(-eta y f), y in {-1, +1}.
- gentle (FHT 2000, Algorithm 4): f the weighted least-squares tree of y in {-1, +1} with
  weights w (leaf sum w y / sum w, a Newton step on E exp(-y F)), its leaves shrunk by eta;
  F <- F + f, w <- w exp(-y f); vote 1, err the weighted share of sign(f) != y. Its scores
  are h = (-f, f) for two classes. For K > 2, one-vs-rest as FHT's AdaBoost.MH (their
  Algorithm 5 with a separate tree per class): each class k boosts y_k = +1 if y = k else -1
  with its own weights w_ik, h_k = f_k, err the weighted Hamming error over all (i, k).

Weights are renormalized to sum 1 after each round (the gentle K-class ones over all (i, k)).
"""

import dataclasses

import numpy as np
from scipy.special import expit, softmax

from ensembles.engine.splitting import GINI, NEWTON
from ensembles.methods.cart import CartGrower

EPS = np.finfo(np.float64).eps  # scikit-learn's floor under SAMME.R's class probabilities


@dataclasses.dataclass(frozen=True)
class Round:
    """A round's member (a Tree, or the K one-vs-rest Trees of gentle K-class boosting; None:
    no better than chance, dropped), vote, weighted error, and the next weights (None:
    boosting stops after this round)."""

    member: object
    vote: float
    error: float
    weight: np.ndarray | None


def _grow(grower: CartGrower, codes, stats, weight, seed):
    """A tree on the rows of positive weight, each row's unit statistics times its weight."""
    rows = np.flatnonzero(weight > 0).astype(np.int32)
    return grower.grow(codes, stats * weight[:, None], rows, seed)


def _grow_exact(grower: CartGrower, codes, stats, target, weight, seed, scale=1.0):
    """A tree grown as _grow, each leaf then set to scale * sum w target / sum w over its rows,
    summed from the rows: the grower's leaves come from histogram subtraction, a few float
    ulps of the parent's sums off, so a pure leaf's 0 may come out as 1e-15, which SAMME.R's
    log p (clipped at eps) would turn into a different vote."""
    rows = np.flatnonzero(weight > 0).astype(np.int32)
    tree = grower.grow(codes, stats * weight[:, None], rows, seed)
    leaf, w = tree.apply_binned(codes[rows]), weight[rows]
    n_leaves = tree.value.shape[0]
    sums = np.column_stack([np.bincount(leaf, w * column, n_leaves)
                            for column in target[rows].reshape(len(rows), -1).T])
    value = scale * sums / np.bincount(leaf, w, n_leaves)[:, None]
    return dataclasses.replace(tree, value=value)


def _normalized(weight):
    return weight / weight.sum()


class Samme:
    """Discrete AdaBoost for K classes (SAMME)."""

    criterion = GINI
    normalized_scores = True  # the class scores are sum_m alpha_m h_m / sum_m alpha_m

    @staticmethod
    def unit_stats(y_codes, n_classes):
        return np.eye(n_classes)[y_codes]

    @staticmethod
    def initial_weight(weight, n_classes):
        return weight

    @staticmethod
    def boost(grower, codes, unit_stats, y_codes, weight, learning_rate, seed) -> Round:
        n_classes = unit_stats.shape[1]
        tree = _grow(grower, codes, unit_stats, weight, seed)
        incorrect = np.argmax(tree.predict_binned(codes), axis=1) != y_codes
        error = float(np.average(incorrect, weights=weight))
        if error <= 0.0:
            return Round(tree, 1.0, 0.0, None)
        if error >= 1.0 - 1.0 / n_classes:
            return Round(None, 0.0, error, None)
        vote = learning_rate * (np.log((1.0 - error) / error) + np.log(n_classes - 1))
        return Round(tree, vote, error, _normalized(weight * np.exp(vote * incorrect)))

    @staticmethod
    def scores(member, X, n_classes):
        coded = np.full((X.shape[0], n_classes), -1.0 / (n_classes - 1))
        coded[np.arange(X.shape[0]), np.argmax(member.predict(X), axis=1)] = 1.0
        return coded

    @staticmethod
    def decision(scores):
        """f (n_samples, K); for two classes f_1 - f_0, as scikit-learn."""
        return scores[:, 1] - scores[:, 0] if scores.shape[1] == 2 else scores

    @staticmethod
    def proba(scores):
        """softmax(f / (K - 1)), scikit-learn's (Zhu et al. 2009, eq. (15))."""
        return softmax(scores / (scores.shape[1] - 1), axis=1)


class SammeR(Samme):
    """Real AdaBoost for K classes (SAMME.R)."""

    @staticmethod
    def boost(grower, codes, unit_stats, y_codes, weight, learning_rate, seed) -> Round:
        n_classes = unit_stats.shape[1]
        tree = _grow_exact(grower, codes, unit_stats, unit_stats, weight, seed)
        proba = tree.predict_binned(codes)
        error = float(np.average(np.argmax(proba, axis=1) != y_codes, weights=weight))
        if error <= 0.0:
            return Round(tree, 1.0, 0.0, None)
        coding = np.where(unit_stats > 0, 1.0, -1.0 / (n_classes - 1))
        y_log_proba = (coding * np.log(np.clip(proba, EPS, None))).sum(axis=1)
        step = -learning_rate * (n_classes - 1) / n_classes * y_log_proba
        return Round(tree, 1.0, error, _normalized(weight * np.exp(step)))

    @staticmethod
    def scores(member, X, n_classes):
        """h_k = (K - 1)(log p_k - 1/K sum_j log p_j), p clipped below at eps."""
        log_proba = np.log(np.clip(member.predict(X), EPS, None))
        return (n_classes - 1) * (log_proba - log_proba.mean(axis=1, keepdims=True))


class Gentle:
    """Gentle AdaBoost: binary, one-vs-rest (AdaBoost.MH) for K > 2."""

    criterion = NEWTON
    normalized_scores = False  # the class scores are F = sum_m f_m

    @staticmethod
    def unit_stats(y_codes, n_classes):
        """Per output (one, or one per class), the squared-error channels (g, h, y^2) =
        (-y, 1, 1) of y in {-1, +1}: times w, leaf -G / H = sum w y / sum w."""
        signs = 2.0 * np.eye(n_classes)[y_codes] - 1.0
        signs = signs[:, 1:] if n_classes == 2 else signs
        return np.stack([-signs, np.ones_like(signs), np.ones_like(signs)], axis=2)

    @staticmethod
    def initial_weight(weight, n_classes):
        n_outputs = 1 if n_classes == 2 else n_classes
        return np.repeat(weight[:, None] / n_outputs, n_outputs, axis=1)

    @staticmethod
    def boost(grower, codes, unit_stats, y_codes, weight, learning_rate, seed) -> Round:
        trees, steps = [], np.empty_like(weight)
        signs = -unit_stats[:, :, 0]
        for k in range(weight.shape[1]):
            trees.append(_grow_exact(grower, codes, unit_stats[:, k], signs[:, k],
                                     weight[:, k], seed, learning_rate))
            steps[:, k] = trees[-1].predict_binned(codes)[:, 0]
        error = float(np.sum(weight * (np.sign(steps) != signs)) / weight.sum())
        member = trees[0] if len(trees) == 1 else trees
        return Round(member, 1.0, error, _normalized(weight * np.exp(-signs * steps)))

    @staticmethod
    def scores(member, X, n_classes):
        if n_classes == 2:
            f = member.predict(X)[:, 0]
            return np.column_stack([-f, f])
        return np.column_stack([tree.predict(X)[:, 0] for tree in member])

    @staticmethod
    def decision(scores):
        """FHT's F: f_1 for two classes, (F_1 .. F_K) for K."""
        return scores[:, 1] if scores.shape[1] == 2 else scores

    @staticmethod
    def proba(scores):
        """P(y_k = 1 | x) = 1 / (1 + exp(-2 F_k)), FHT's Lemma 1 (F = 1/2 log-odds minimizes
        E exp(-y F)) inverted, normalized over k for K > 2 (the one-vs-rest estimates need not
        sum to 1); for two classes (-F, F) gives 1 - p and p."""
        proba = expit(2.0 * scores)
        return proba / proba.sum(axis=1, keepdims=True)


ALGORITHMS = {"SAMME": Samme, "SAMME.R": SammeR, "gentle": Gentle}
