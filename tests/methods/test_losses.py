"""The fused per-row kernels of the losses (weighted_stats) against finite differences of the
loss itself: g = dl/dF and h = d2l/dF2 (the diagonal for softmax)."""

import numpy as np
import pytest

from ensembles.losses import LogisticLoss, SoftmaxLoss, SquaredLoss

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
