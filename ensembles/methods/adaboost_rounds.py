"""One round of each AdaBoost: the engine tree(s) it grows on the weights w, its vote, its
weighted error, the next weights, and its member's class scores h (n_samples, K).

Two classes are one binary problem: SAMME is Discrete AdaBoost (AdaBoost.M1), SAMME.R Real
AdaBoost, gentle Gentle AdaBoost (FHT 2000, Algorithms 1, 2 and 4), and AdaBoost.MH of K = 2
is the same algorithm (below). For K > 2 classes, `multiclass` chooses how the algorithm
handles them (round_algorithm):

multiclass="samme" (Zhu, Zou, Rosset and Hastie 2009, "Multi-class AdaBoost"):
- SAMME (their Algorithm 2): a weighted Gini tree g, err = sum_i w_i [g(x_i) != y_i], vote
  alpha = eta (log((1 - err) / err) + log(K - 1)), w_i <- w_i exp(alpha [g(x_i) != y_i]);
  h_k = 1 if g(x) = k else -1 / (K - 1).
- SAMME.R (their Algorithm 4; for K = 2 Real AdaBoost, Friedman, Hastie and Tibshirani 2000,
  "Additive logistic regression", Algorithm 2): the weighted Gini tree's leaf class
  frequencies p, clipped below at float64 eps as scikit-learn < 1.6 did, give
  h_k = (K - 1)(log p_k - 1/K sum_j log p_j) and w_i <- w_i exp(-eta (K - 1) / K y_i^T log p(x_i))
  with y_ik = 1 for the true class, -1 / (K - 1) otherwise; vote 1, eta in the weights only (as
  scikit-learn). For K = 2, h_1 = -h_0 = 1/2 log(p_1 / p_0) = FHT's f (h_1 - h_0 = 2 f), and
  the weights become w exp(-eta y f), y in {-1, +1}.
- gentle (FHT 2000, Algorithm 4): f the weighted least-squares tree of y in {-1, +1} with
  weights w (leaf sum w y / sum w, a Newton step on E exp(-y F)), its leaves shrunk by eta;
  F <- F + f, w <- w exp(-y f); vote 1, err the weighted share of sign(f) != y. Its scores
  are h = (-f, f) for two classes. For K > 2, one against the rest with a tree per class:
  each class k boosts y_k = +1 if y = k else -1 with its own weights w_ik, h_k = f_k, err
  the weighted Hamming error over all (i, k).

multiclass="mh", AdaBoost.MH (Schapire and Singer 1999, "Improved boosting algorithms using
confidence-rated predictions", sections 7 and 4; FHT 2000 section 8, Algorithm 5, the K-class
AdaBoost of their time): K binary problems on the N K pairs (i, k), labels y_ik = +1 if
y_i = k else -1, weights w_ik (w_i / K at first). Each round grows ONE tree, a partition of
the input space into leaves j shared by the K problems (Schapire and Singer's
domain-partitioning hypotheses), and gives it a value c_jk per leaf and class from
W+_jk, W-_jk, the weights of the leaf's pairs of class k with y_ik = +1 and -1:
- discrete: c_jk = sign(W+_jk - W-_jk) (0: the leaf abstains on k), r = sum_ik w_ik y_ik
  c_k(x_i), err = (1 - r) / 2 the weighted Hamming error (abstentions count half), vote
  alpha = eta 1/2 log((1 - err) / err); w_ik <- w_ik exp(-alpha y_ik c_k(x_i));
- real: c_jk = 1/2 log(p+_jk / p-_jk), p+-_jk = W+-_jk / (W+_jk + W-_jk) clipped below at
  float64 eps as SAMME.R's p (Schapire and Singer smooth instead, W + epsilon, sec. 4.2);
  w_ik <- w_ik exp(-eta y_ik c_k(x_i)), vote 1 (eta in the weights only, as SAMME.R);
- gentle: c_jk = eta (W+_jk - W-_jk) / (W+_jk + W-_jk), the weighted mean of y_ik in the
  leaf; w_ik <- w_ik exp(-y_ik c_k(x_i)), vote 1.
Then F_k <- F_k + alpha c_k, weights renormalized over all (i, k), the class argmax_k F_k.
The tree's split criterion is the one the binary algorithms use, per class, summed over the
classes: the binary Gini of the pairs (W+_k, W-_k) for discrete and real, the weighted
squared error of y_k for gentle. These are one criterion: with y in {-1, +1},
(W+^2 + W-^2) / W = (W + (W+ - W-)^2 / W) / 2, so the summed Gini gain is half the summed
squared-error gain sum_k G_k^2 / H_k (G_k = sum w_ik y_ik, H_k = sum w_ik; splitting's
SUMMED_NEWTON). (Schapire and Singer choose the partition by their bound Z; summed Gini keeps
K = 2 the lab's binary algorithms, whose trees are Gini trees as scikit-learn's.) For K = 2
the pairs (i, 0) and (i, 1) mirror each other (y_i0 = -y_i1, equal weights, c_j0 = -c_j1):
the tree, the weights and the class are the binary algorithm's.

Weights are renormalized to sum 1 after each round (over all (i, k) where they are per pair).
"""

import dataclasses

import numpy as np
from scipy.special import expit, softmax

from ensembles.engine.cart_histogram import SQUARED_ERROR_STATS
from ensembles.engine.splitting import GINI, NEWTON, SUMMED_NEWTON
from ensembles.methods.cart import CartGrower

EPS = np.finfo(np.float64).eps  # scikit-learn's floor under SAMME.R's class probabilities


@dataclasses.dataclass(frozen=True)
class Round:
    """A round's member (a Tree, or the K one-vs-rest Trees of gentle K-class boosting under
    multiclass="samme"; None: no better than chance, dropped), vote, weighted error, and the
    next weights (None: boosting stops after this round)."""

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
    w = weight[:, None]
    value = scale * _leaf_sums(tree, codes, rows, w * target.reshape(len(w), -1)) / _leaf_sums(
        tree, codes, rows, w)
    return dataclasses.replace(tree, value=value)


def _leaf_sums(tree, codes, rows, values):
    """Per leaf of `tree`, the sums of the columns of `values` (n_samples, m) over the `rows`
    that end in it: (n_leaves, m)."""
    leaf, n_leaves = tree.apply_binned(codes[rows]), tree.value.shape[0]
    return np.column_stack([np.bincount(leaf, column, n_leaves) for column in values[rows].T])


def _normalized(weight):
    return weight / weight.sum()


def _hamming_error(weight, signs, steps):
    """The weighted share of the outputs (i, k) whose step's sign is not y_ik: the weighted
    error of a binary round, the weighted Hamming error over the pairs of a K-class one."""
    return float(np.sum(weight * (np.sign(steps) != signs)) / weight.sum())


class Samme:
    """Discrete AdaBoost for K classes (SAMME)."""

    criterion = GINI
    normalized_scores = True  # the class scores are sum_m alpha_m h_m / sum_m alpha_m

    @staticmethod
    def chance_error(n_classes):
        """The error of a guess, 1 - 1/K: a tree no better is dropped and boosting stops."""
        return 1.0 - 1.0 / n_classes

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
        if error >= Samme.chance_error(n_classes):
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
    """Gentle AdaBoost: binary; for K > 2 one against the rest, a tree per class."""

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
        error = _hamming_error(weight, signs, steps)
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


def _pair_stats(y_codes, n_classes):
    """AdaBoost.MH's pairs (i, k) as K outputs of a row: (g, h, y^2) = (-y_ik, 1, 1) each,
    (n_samples, 3 K), output k's channels at 3 k (splitting's SUMMED_NEWTON)."""
    return Gentle.unit_stats(y_codes, n_classes).reshape(len(y_codes), -1)


def _pair_signs(pair_stats):
    """y_ik in {-1, +1} (n_samples, K) of _pair_stats."""
    return -pair_stats[:, ::SQUARED_ERROR_STATS]


def _shared_tree(grower: CartGrower, codes, pair_stats, weight, seed):
    """AdaBoost.MH's tree (module docstring): one partition grown on the pairs' statistics
    times their weights w_ik (SUMMED_NEWTON), and per leaf j and class k the weights W+_jk and
    W-_jk of its pairs with y_ik = +1 and -1, summed from the rows (as _grow_exact)."""
    rows = np.flatnonzero(weight.sum(axis=1) > 0).astype(np.int32)
    tree = grower.grow(codes, pair_stats * np.repeat(weight, SQUARED_ERROR_STATS, axis=1), rows,
                       seed)
    signs = _pair_signs(pair_stats)
    return (tree, _leaf_sums(tree, codes, rows, weight * (signs > 0)),
            _leaf_sums(tree, codes, rows, weight * (signs < 0)))


def _share(part, total):
    """part / total, 0 where total is 0 (a leaf whose pairs of a class all weigh 0)."""
    return np.divide(part, total, out=np.zeros_like(part), where=total > 0)


class AdaBoostMH:
    """AdaBoost.MH (module docstring): the pairs, their weights and the class scores shared by
    its three forms; `leaf_values(W+, W-, eta)` and `boost` are each form's."""

    criterion = SUMMED_NEWTON
    normalized_scores = False  # the class scores are F_k = sum_m alpha_m c_mk
    unit_stats = staticmethod(_pair_stats)
    initial_weight = staticmethod(Gentle.initial_weight)
    decision = staticmethod(Gentle.decision)
    proba = staticmethod(Gentle.proba)

    @classmethod
    def _grow_round(cls, grower, codes, pair_stats, weight, learning_rate, seed):
        """The round's tree with its leaf values c_jk, the pairs' labels y_ik and c_k(x_i)."""
        tree, plus, minus = _shared_tree(grower, codes, pair_stats, weight, seed)
        member = dataclasses.replace(tree, value=cls.leaf_values(plus, minus, learning_rate))
        return member, _pair_signs(pair_stats), member.predict_binned(codes)

    @staticmethod
    def scores(member, X, n_classes):
        return member.predict(X)


class DiscreteMH(AdaBoostMH):
    """Discrete AdaBoost.MH: c_jk = sign(W+_jk - W-_jk), vote alpha from the weighted Hamming
    error."""

    @staticmethod
    def chance_error(n_classes):
        """The Hamming error of a guess on each binary problem, 1/2."""
        return 0.5

    @staticmethod
    def leaf_values(plus, minus, learning_rate):
        return np.sign(plus - minus)

    @classmethod
    def boost(cls, grower, codes, unit_stats, y_codes, weight, learning_rate, seed) -> Round:
        member, signs, votes = cls._grow_round(grower, codes, unit_stats, weight,
                                               learning_rate, seed)
        error = float(0.5 * (1.0 - np.sum(weight * signs * votes) / weight.sum()))
        if error <= 0.0:
            return Round(member, 1.0, 0.0, None)
        if error >= cls.chance_error(signs.shape[1]):
            return Round(None, 0.0, error, None)
        vote = learning_rate * 0.5 * np.log((1.0 - error) / error)
        return Round(member, vote, error, _normalized(weight * np.exp(-vote * signs * votes)))


class RealMH(AdaBoostMH):
    """Real AdaBoost.MH: c_jk = 1/2 log(p+_jk / p-_jk), p clipped below at eps."""

    @staticmethod
    def leaf_values(plus, minus, learning_rate):
        total = plus + minus
        return 0.5 * (np.log(np.clip(_share(plus, total), EPS, None))
                      - np.log(np.clip(_share(minus, total), EPS, None)))

    @classmethod
    def boost(cls, grower, codes, unit_stats, y_codes, weight, learning_rate, seed) -> Round:
        member, signs, steps = cls._grow_round(grower, codes, unit_stats, weight,
                                               learning_rate, seed)
        error = _hamming_error(weight, signs, steps)
        if error <= 0.0:
            return Round(member, 1.0, 0.0, None)
        return Round(member, 1.0, error,
                     _normalized(weight * np.exp(-learning_rate * signs * steps)))


class GentleMH(AdaBoostMH):
    """Gentle AdaBoost.MH: c_jk = eta (W+_jk - W-_jk) / (W+_jk + W-_jk)."""

    @staticmethod
    def leaf_values(plus, minus, learning_rate):
        return learning_rate * _share(plus - minus, plus + minus)

    @classmethod
    def boost(cls, grower, codes, unit_stats, y_codes, weight, learning_rate, seed) -> Round:
        member, signs, steps = cls._grow_round(grower, codes, unit_stats, weight,
                                               learning_rate, seed)
        return Round(member, 1.0, _hamming_error(weight, signs, steps),
                     _normalized(weight * np.exp(-signs * steps)))


ALGORITHMS = {"SAMME": Samme, "SAMME.R": SammeR, "gentle": Gentle}
MULTICLASS = {"samme": ALGORITHMS,
              "mh": {"SAMME": DiscreteMH, "SAMME.R": RealMH, "gentle": GentleMH}}


def round_algorithm(algorithm: str, multiclass: str, n_classes: int):
    """The rounds of `algorithm` under the `multiclass` scheme for n_classes classes; two
    classes are one binary problem under either scheme (module docstring)."""
    return MULTICLASS["samme" if n_classes == 2 else multiclass][algorithm]
