"""How a CART tree is grown for the forests and AdaBoost: the grower's parameters as one
record, as TreeParams is for boosting, and the grower that lends each thread a workspace."""

import dataclasses
import queue

import numpy as np

from ensembles.engine.binning import BinMapper
from ensembles.engine.cart_grower import cart_workspace, grow_cart_tree
from ensembles.engine.splitting import GINI
from ensembles.engine.tree import Tree


@dataclasses.dataclass(frozen=True)
class CartParams:
    """How each tree is grown (meanings as in scikit-learn; 0: no limit, as in XGBoost).

    criterion: splitting.GINI, ENTROPY or NEWTON (squared error); max_features: how many
    non-constant features each node scores; random_splits: one random threshold per feature
    (extra trees); min_child_weight and min_split_gain as in XGBoost. The defaults admit every
    split whose children carry weight: min_child_weight is the smallest positive float, so a
    child whose weight, found by subtracting its sibling's from its parent's, rounds to 0 or
    below is no split (AdaBoost's weights span many orders of magnitude after a few rounds;
    with the exact sums of integer bootstrap counts it never binds)."""

    max_features: int
    criterion: int = GINI
    max_depth: int = 0
    max_leaf_nodes: int = 0
    min_samples_split: int = 2
    min_samples_leaf: int = 1
    min_child_weight: float = float(np.finfo(np.float64).tiny)
    min_split_gain: float = -np.inf
    random_splits: bool = False


class CartGrower:
    """Grows the trees of one fit (a forest's or AdaBoost's) with its bins and parameters on
    `n_stats` statistics of up to `n_rows` rows. Each tree borrows a workspace
    (engine.cart_grower.cart_workspace) from those the fit made, one per thread that grows at
    the same time, and gives it back: the node arrays are allocated once per thread, not once
    per tree."""

    def __init__(self, bin_mapper: BinMapper, params: CartParams, n_rows: int, n_stats: int):
        self.bin_mapper = bin_mapper
        self.params = params
        self.n_rows = n_rows
        self.n_stats = n_stats
        self._free_workspaces = queue.SimpleQueue()

    def grow(self, codes: np.ndarray, stats: np.ndarray, rows: np.ndarray, seed: int) -> Tree:
        """One tree on the binned `codes` and per-row `stats` (class weights, or
        (g, h, w y^2)) of the int32 `rows`."""
        params = self.params
        try:
            workspace = self._free_workspaces.get_nowait()
        except queue.Empty:
            workspace = cart_workspace(self.n_rows, codes.shape[1], self.n_stats,
                                       params.criterion, params.max_depth,
                                       params.max_leaf_nodes, self.bin_mapper.categorical_)
        arrays = grow_cart_tree(codes, stats, rows, self.bin_mapper.n_bins_,
                                self.bin_mapper.bin_upper_values_, self.bin_mapper.categorical_,
                                params.criterion, params.max_depth, params.max_leaf_nodes,
                                params.min_samples_split, params.min_samples_leaf,
                                params.min_child_weight, params.min_split_gain,
                                params.max_features, params.random_splits, seed, workspace)
        self._free_workspaces.put(workspace)
        return Tree.from_grown(arrays, self.bin_mapper)
