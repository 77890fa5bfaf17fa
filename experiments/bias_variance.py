"""Bias-variance decomposition of the test loss over bootstrap training sets.

Protocol: one fixed test set (the job's first holdout split); B training sets drawn with
replacement from the remaining rows, each as large as that pool; the method fitted on each and
predicting the test set: predictions P (B, n_test).

Squared loss: main prediction ybar(x) = mean_b P_b(x); E_b,x (P - y)^2 = bias^2 + variance with
bias^2 = E_x (ybar - y)^2 and variance = E_b,x (P - ybar)^2 (exact; the observed y stands for
the optimal prediction, so bias^2 includes the noise).
0-1 loss (Domingos 2000, "A unified bias-variance decomposition", Theorems 2 and 3,
noise taken as zero): main prediction y_m(x) = the most frequent P_b(x); B(x) = 1[y_m != y];
V(x) = P_b(P_b != y_m). Per point, loss = B + (1 - 2 B) V for two classes and in general
loss = B + c(x) V with c = 1 if B = 0 and c = -P_b(P_b = y | P_b != y_m) if B = 1, so that
E_x loss = E_x B + E_x[(1 - B) V] - E_x[B P_b(P_b = y)]: bias + unbiased - biased variance.
"""

from collections.abc import Iterator

import numpy as np
from sklearn.base import BaseEstimator

from experiments.configs import Task
from experiments.evaluation import fit_and_score


def squared_loss_decomposition(predictions: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """bv_loss = E (P - y)^2 = bv_bias (E_x (ybar - y)^2, noise included) + bv_variance."""
    main = predictions.mean(axis=0)
    return {
        "bv_loss": float(np.mean((predictions - y) ** 2)),
        "bv_bias": float(np.mean((main - y) ** 2)),
        "bv_variance": float(np.mean((predictions - main) ** 2)),
    }


def main_prediction(labels: np.ndarray) -> np.ndarray:
    """Per column of (B, n) labels, the most frequent one (the smallest of a tie)."""
    values, codes = np.unique(labels, return_inverse=True)
    codes = codes.reshape(labels.shape)
    counts = np.zeros((len(values), labels.shape[1]), dtype=int)
    np.add.at(counts, (codes, np.arange(labels.shape[1])[None, :]), 1)
    return values[np.argmax(counts, axis=0)]


def zero_one_decomposition(predictions: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """Domingos' 0-1 decomposition: bv_loss = bv_bias + bv_variance exactly, with bv_variance =
    bv_variance_unbiased (E_x[(1 - B) V]) - bv_variance_biased (E_x[B P_b(P_b = y)], which is
    E_x[B V] for two classes)."""
    main = main_prediction(predictions)
    bias = main != y
    variance = np.mean(predictions != main, axis=0)
    hits = np.mean(predictions == y, axis=0)
    unbiased = float(np.mean(~bias * variance))
    biased = float(np.mean(bias * hits))
    return {
        "bv_loss": float(np.mean(predictions != y)),
        "bv_bias": float(np.mean(bias)),
        "bv_variance": unbiased - biased,
        "bv_variance_unbiased": unbiased,
        "bv_variance_biased": biased,
    }


def bootstrap_samples(pool: np.ndarray, n_bootstrap: int, seed: int) -> Iterator[np.ndarray]:
    """n_bootstrap draws of len(pool) rows of `pool` with replacement (numpy RandomState(seed))."""
    rng = np.random.RandomState(seed)
    for _ in range(n_bootstrap):
        yield pool[rng.randint(0, len(pool), len(pool))]


def evaluate_bias_variance(
    estimator: BaseEstimator,
    task: Task,
    X: np.ndarray,
    y: np.ndarray,
    split: tuple[np.ndarray, np.ndarray],
    n_bootstrap: int,
    seed: int,
) -> tuple[list[dict[str, float]], dict[str, float]]:
    """Fit the estimator on each bootstrap sample of split's training rows and score it on its
    test rows; return each fit's test metrics (as splits) and the bv_* decomposition."""
    train, test = split
    scores, predictions = [], []
    for rows in bootstrap_samples(train, n_bootstrap, seed):
        model, fit_scores = fit_and_score(estimator, task, X[rows], y[rows], X[test], y[test])
        scores.append(fit_scores)
        predictions.append(model.predict(X[test]))
    decompose = squared_loss_decomposition if task is Task.regression else zero_one_decomposition
    return scores, decompose(np.array(predictions), y[test])
