"""Tables of the diversity of ensembles of independent members (div_*,
experiments/analyses/diversity.py)."""

import pandas as pd

from reports.analyses.per_dataset import cell_statistics, dataset_tables
from reports.render import TextTable

DIVERSITY_COLUMNS = {
    "div_member_error": "member error",
    "div_vote_error": "vote error",
    "div_binomial_vote_error": "binomial vote error",
    "div_disagreement": "disagreement",
    "div_q": "Q",
    "div_strength": "strength s",
    "div_correlation": "correlation rho",
    "div_breiman_bound": "bound rho(1-s^2)/s^2",
}
DIVERSITY_CAPTION = (
    "Ensembles of independent members on the test set, mean over seeds and splits: mean member "
    "error, error of the members' majority vote and its binomial prediction for independent "
    "members (ESL 8.7); mean pairwise disagreement and Yule's Q of the members' oracle outputs "
    "(Kuncheva and Whitaker 2003); Breiman's (2001) strength s, mean correlation rho of the raw "
    "margins and the bound PE* <= rho (1 - s^2) / s^2."
)


def diversity_tables(runs: pd.DataFrame) -> list[TextTable]:
    """Per dataset: errors, pairwise diversity and Breiman's strength, correlation and bound."""
    stats = cell_statistics(runs, list(DIVERSITY_COLUMNS))
    if stats.empty:
        return []
    return dataset_tables(
        stats, "diversity", lambda _: (DIVERSITY_COLUMNS, DIVERSITY_CAPTION), False
    )
