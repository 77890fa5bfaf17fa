"""How a CART tree is grown for the forests and AdaBoost: the grower's parameters as one
record (engine.cart_grower.CartParams), which the kernels take whole, and the grower that lends
each thread a workspace."""

import queue

import numpy as np

from ensembles.engine.binning import BinMapper
from ensembles.engine.cart_grower import BinnedData, CartParams, cart_workspace, grow_cart_tree
from ensembles.engine.tree import Tree


class CartGrower:
    """Grows the trees of one fit (a forest's or AdaBoost's) with its bins and parameters on
    `n_stats` statistics of up to `n_rows` rows. Each tree borrows a workspace
    (engine.cart_grower.cart_workspace) from those the fit made, one per thread that grows at
    the same time, and gives it back: the node arrays are allocated once per thread, not once
    per tree."""

    def __init__(self, bin_mapper: BinMapper, params: CartParams, n_rows: int, n_stats: int):
        self.bin_mapper = bin_mapper
        self.params = params.typed()
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
                                       params.max_leaves, self.bin_mapper.categorical_)
        data = BinnedData(codes, stats, self.bin_mapper.n_bins_,
                          self.bin_mapper.bin_upper_values_, self.bin_mapper.categorical_)
        arrays = grow_cart_tree(data, rows, params, seed, workspace)
        self._free_workspaces.put(workspace)
        return Tree.from_grown(arrays, self.bin_mapper)
