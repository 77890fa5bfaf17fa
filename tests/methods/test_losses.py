"""The fused per-row kernels of the losses (weighted_stats) against finite differences of the
loss itself: g = dl/dF and h = d2l/dF2 (the diagonal for softmax); the two-class
probabilities against numpy's."""

import numpy as np
import pytest
import scipy.special

from ensembles.losses import (
    HESSIAN_FLOOR,
    ROW_BLOCK,
    ExponentialLoss,
    LogisticLoss,
    SoftmaxLoss,
    SquaredLoss,
    compiled_stats_targets,
    compiled_weighted_stats,
    kernel_weights,
)

STEP = 1e-4


def row_loss(loss, y, raw):
    """l(y_i, F_i) of each row."""
    return np.array([loss.loss(y[i:i + 1], raw[i:i + 1], np.ones(1)) for i in range(len(y))])


@pytest.mark.parametrize("loss, n_outputs", [(LogisticLoss(), 1), (SoftmaxLoss(), 4),
                                             (SquaredLoss(), 1)],
                         ids=["logistic", "softmax", "squared"])
def test_weighted_stats_are_weighted_derivatives_of_the_loss(loss, n_outputs):
    rng = np.random.default_rng(0)
    n = 50
    y = rng.integers(0, max(n_outputs, 2), n)
    if isinstance(loss, SquaredLoss):
        y = rng.normal(size=n)
    raw = 2.0 * rng.normal(size=(n, n_outputs))
    weight = rng.uniform(0.5, 2.0, n)
    out = np.empty((n_outputs, n, 2))
    loss.weighted_stats(y, raw, weight, out)
    for k in range(n_outputs):
        shift = np.zeros_like(raw)
        shift[:, k] = STEP
        up, mid, down = (row_loss(loss, y, raw + s) for s in (shift, 0 * shift, -shift))
        np.testing.assert_allclose(out[k, :, 0], weight * (up - down) / (2 * STEP), atol=1e-7)
        np.testing.assert_allclose(out[k, :, 1], weight * (up - 2 * mid + down) / STEP**2,
                                   atol=1e-5)


@pytest.mark.parametrize("n", [ROW_BLOCK - 5, 2 * ROW_BLOCK + 3])
def test_compiled_squared_stats_are_the_losses_weighted_stats(n):
    """compiled_weighted_stats (the statistics of the compiled boosting rounds) writes the
    squared loss's weighted_stats (its own kernel: several outputs), bit for bit, with given
    and broadcast weights, in one block of rows and in several. (The logistic loss's
    weighted_stats is compiled_weighted_stats: its test is the closed form below.)"""
    rng = np.random.default_rng(2)
    loss, y = SquaredLoss(), rng.normal(size=n)
    raw = 3.0 * rng.normal(size=(n, 1))
    for weight in (np.broadcast_to(1.0, n), rng.uniform(0.5, 2.0, n)):
        expected, compiled = np.empty((1, n, 2), np.float32), np.empty((1, n, 2), np.float32)
        loss.weighted_stats(y, raw, weight, expected)
        compiled_weighted_stats(loss.compiled_stats, *compiled_stats_targets(
            loss.compiled_stats, y), raw[:, 0], *kernel_weights(weight), compiled)
        assert compiled.tobytes() == expected.tobytes()


def test_logistic_stats_match_numpy_with_broadcast_and_given_weights():
    """Both weight paths of the vectorized kernel, on blocks of rows and a partial last one,
    against numpy's closed form (raw far out too: p is then exactly 0 or 1)."""
    rng = np.random.default_rng(1)
    n = 3 * ROW_BLOCK + 17
    raw = 4.0 * rng.normal(size=(n, 1))
    raw[:4, 0] = [800.0, -800.0, 40.0, -40.0]
    y = rng.integers(0, 2, n)
    p = scipy.special.expit(raw[:, 0])
    given = rng.uniform(0.5, 2.0, n)
    for weight in (np.broadcast_to(1.0, n), given):
        out = np.empty((1, n, 2))
        LogisticLoss().weighted_stats(y, raw, weight, out)
        np.testing.assert_allclose(out[0, :, 0], (p - y) * weight, rtol=1e-14,
                                   atol=1e-15)  # p within 2 units of 1.0 where y = 1
        np.testing.assert_allclose(out[0, :, 1], np.maximum(p * (1 - p), HESSIAN_FLOOR) * weight,
                                   rtol=1e-14, atol=1e-15)


def test_softmax_stats_match_numpy_with_broadcast_and_given_weights():
    """Both weight paths, on blocks of rows and a partial last one, raw in either order,
    against scipy's softmax."""
    rng = np.random.default_rng(2)
    n, n_classes = 2 * ROW_BLOCK + 5, 5
    raw = 3.0 * rng.normal(size=(n, n_classes))
    raw[0] = [900.0, -900.0, 0.0, 1.0, 2.0]
    y = rng.integers(0, n_classes, n).astype(np.int8)
    p = scipy.special.softmax(raw, axis=1)
    one_hot = np.eye(n_classes)[y]
    for weight in (np.broadcast_to(1.0, n), rng.uniform(0.5, 2.0, n)):
        for order in ("C", "F"):
            out = np.empty((n_classes, n, 2))
            SoftmaxLoss().weighted_stats(y, np.asarray(raw, order=order), weight, out)
            np.testing.assert_allclose(out[:, :, 0].T, (p - one_hot) * weight[:, None],
                                       rtol=1e-13, atol=1e-15)
            np.testing.assert_allclose(out[:, :, 1].T, np.maximum(p * (1 - p), HESSIAN_FLOOR)
                                       * weight[:, None], rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("loss, scale", [(LogisticLoss(), 1.0), (ExponentialLoss(), 2.0)],
                         ids=["logistic", "exponential"])
def test_two_class_probabilities_are_one_minus_p_and_p(loss, scale):
    """p = sigmoid(scale * F) (the exponential loss's p is the logistic of 2F), both columns
    exactly as numpy computes them, also where p rounds to 0 or 1."""
    raw = np.concatenate([6.0 * np.random.default_rng(1).normal(size=200), [-800.0, 800.0]])
    p = scipy.special.expit(scale * raw)
    assert np.array_equal(loss.output(raw[:, None]), np.column_stack([1.0 - p, p]))
