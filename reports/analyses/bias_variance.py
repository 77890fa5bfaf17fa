"""Tables of the bias-variance decomposition (bv_*, experiments/bias_variance.py)."""

import pandas as pd

from reports.analyses.per_dataset import cell_statistics, dataset_tables
from reports.render import PLUS_MINUS, TextTable

ZERO_ONE_COLUMNS = {
    "bv_loss": "loss",
    "bv_bias": "bias",
    "bv_variance": "variance",
    "bv_variance_unbiased": "unbiased var.",
    "bv_variance_biased": "biased var.",
}
SQUARED_LOSS_COLUMNS = {"bv_loss": "loss", "bv_bias": "bias^2", "bv_variance": "variance"}
BIAS_VARIANCE_CAPTION = (
    "Bias-variance decomposition of the test loss over eval.n_bootstrap bootstrap training sets "
    "and a fixed test set (experiments/bias_variance.py); mean {pm} sample std over "
    "seeds (one test set each); lowest per column in bold. {loss}"
)
SQUARED_LOSS_NOTE = (
    "Squared loss: loss = bias^2 + variance exactly; bias^2 is measured against the observed "
    "y, so it includes the noise."
)
ZERO_ONE_NOTE = (
    "0-1 loss (Domingos 2000): bias = share of test points whose main (most frequent) prediction "
    "is wrong; variance = unbiased var. - biased var. (net variance), so loss = bias + variance "
    "exactly."
)


def bias_variance_layout(present: set[str]) -> tuple[dict[str, str], str]:
    """0-1 columns and note when the unbiased variance was logged, else the squared-loss ones."""
    if "bv_variance_unbiased" in present:
        return ZERO_ONE_COLUMNS, BIAS_VARIANCE_CAPTION.format(pm=PLUS_MINUS, loss=ZERO_ONE_NOTE)
    return SQUARED_LOSS_COLUMNS, BIAS_VARIANCE_CAPTION.format(pm=PLUS_MINUS, loss=SQUARED_LOSS_NOTE)


def bias_variance_tables(runs: pd.DataFrame) -> list[TextTable]:
    """Per dataset: loss, bias, variance (and for 0-1 loss the unbiased and biased variance)."""
    stats = cell_statistics(runs, list(ZERO_ONE_COLUMNS))
    if stats.empty:
        return []
    return dataset_tables(stats, "bias-variance", bias_variance_layout, True)
