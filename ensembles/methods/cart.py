"""How a CART tree is grown for the forests and AdaBoost: the grower's parameters as one
record, as TreeParams is for boosting."""

import dataclasses

import numpy as np

from ensembles.engine.binning import BinMapper
from ensembles.engine.cart_grower import grow_cart_tree
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


def grow_cart(codes: np.ndarray, stats: np.ndarray, rows: np.ndarray, bin_mapper: BinMapper,
              params: CartParams, seed: int) -> Tree:
    """One tree on the binned `codes` and per-row `stats` (class weights, or (g, h, w y^2)) of
    the int32 `rows`."""
    arrays = grow_cart_tree(codes, stats, rows, bin_mapper.n_bins_,
                            bin_mapper.bin_upper_values_, bin_mapper.categorical_,
                            params.criterion, params.max_depth,
                            params.max_leaf_nodes, params.min_samples_split,
                            params.min_samples_leaf, params.min_child_weight,
                            params.min_split_gain, params.max_features, params.random_splits,
                            seed)
    return Tree.from_grown(arrays, bin_mapper)
