"""Rounds of one-output Newton boosting in one compiled call: on tables of a few thousand rows
a round's tree takes about 250 us, and the Python between two rounds (the loss's statistics,
the grower's call, the seed, the round's records) took about 45 more (docs/small_tables.md).

Each round is the Python loop's (methods.boosting): g, h of the loss at the raw scores F
(losses.compiled_weighted_stats), a tree grown on every row, F <- F + eta f (CSC411 GBT
notes, "Recap: Boosted Tree Algorithm"), its leaves shrunk and added as it is grown
(gradient_grower.grow_gradient_tree_fields).
"""

from typing import NamedTuple

import numpy as np
from numba import njit

from ensembles.engine.gradient_grower import grow_gradient_tree_fields
from ensembles.losses import compiled_weighted_stats


class RoundTargets(NamedTuple):
    """What the compiled rounds fit: the loss's compiled statistics (its compiled_stats code),
    y as losses.compiled_stats_targets gives it (labels or values) and the sample weights as
    losses.kernel_weights gives them."""

    stats_code: int
    labels: np.ndarray
    values: np.ndarray
    weight: np.ndarray
    per_row: bool


@njit(cache=True)
def grow_newton_rounds(codes, columns, targets, stats, n_bins, categorical, features, params,
                       category_regularization, seeds, workspace, delivery):
    """len(seeds) boosting rounds, round m grown with seeds[m]: the statistics of `targets`
    at raw = delivery.out (rows x 1) into stats (1 x rows x 2), a tree on every row
    delivered as delivery says (grow_gradient_tree_fields: shrunk, added to raw). Returns
    the trees' tree_fields, in round order, and the workspace."""
    raw = delivery.out.reshape(-1)
    trees = []
    for seed in seeds:
        compiled_weighted_stats(targets.stats_code, targets.labels, targets.values, raw,
                                targets.weight, targets.per_row, stats)
        rows = np.empty(codes.shape[0], np.int32)
        for row in range(rows.shape[0]):
            rows[row] = row
        fields, _, _, workspace = grow_gradient_tree_fields(
            codes, columns, stats[0], rows, n_bins, categorical, features, params,
            category_regularization, seed, workspace, delivery)
        trees.append(fields)
    return trees, workspace
