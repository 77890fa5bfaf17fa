"""Flat array trees: node i splits on feature[i] ("x <= threshold[i]" goes to left[i]) or,
when feature[i] == -1, is a leaf predicting value[i, :]. NaN follows missing_left[i].
"""

from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from ensembles.engine.binning import MISSING_BIN

LEAF = -1


@dataclass(frozen=True)
class Tree:
    """One grown tree. `gain` is the split gain (the importance unit), 0 at leaves."""

    feature: np.ndarray  # int32
    threshold_bin: np.ndarray  # int32, the split in bin codes: code <= threshold_bin
    threshold: np.ndarray  # float64, the same split in raw values: x <= threshold
    missing_left: np.ndarray  # bool
    left: np.ndarray  # int32
    right: np.ndarray  # int32
    value: np.ndarray  # float64, (n_nodes, n_outputs)
    gain: np.ndarray  # float64
    n_samples: np.ndarray  # int32, training rows reaching the node
    weight: np.ndarray  # float64, their weight (hessian) sum

    @classmethod
    def from_grown(cls, arrays: tuple, bin_mapper, scale: float = 1.0) -> "Tree":
        """A Tree from a grower's arrays (feature, threshold_bin, missing_left, left, right,
        value, gain, n_samples, weight), its leaf values multiplied by `scale` (shrinkage)."""
        feature, threshold_bin, missing_left, left, right, value, gain, n_samples, weight = arrays
        return cls(feature, threshold_bin, bin_mapper.raw_thresholds(feature, threshold_bin),
                   missing_left, left, right, value * scale, gain, n_samples, weight)

    @property
    def n_leaves(self) -> int:
        return int(np.count_nonzero(self.feature == LEAF))

    @property
    def depth(self) -> int:
        return int(_node_depths(self.left, self.right).max())

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Leaf values (n_samples, n_outputs) for raw float X (NaN allowed)."""
        out = np.zeros((X.shape[0], self.value.shape[1]))
        _add_leaf_values_raw(self.feature, self.threshold, self.missing_left, self.left,
                             self.right, self.value, X, 1.0, out)
        return out

    def predict_binned(self, codes: np.ndarray) -> np.ndarray:
        """Leaf values for uint8 codes made by the BinMapper the tree was grown on."""
        out = np.zeros((codes.shape[0], self.value.shape[1]))
        _add_leaf_values_binned(self.feature, self.threshold_bin, self.missing_left, self.left,
                                self.right, self.value, codes, 1.0, out)
        return out

    def apply_binned(self, codes: np.ndarray) -> np.ndarray:
        """Index of the leaf each row of binned `codes` falls in."""
        return _leaf_index_binned(self.feature, self.threshold_bin, self.missing_left, self.left,
                                  self.right, codes)

    def add_to(self, X: np.ndarray, out: np.ndarray, scale: float = 1.0) -> None:
        """out += scale * leaf values: the in-place sum an ensemble prediction is made of."""
        _add_leaf_values_raw(self.feature, self.threshold, self.missing_left, self.left,
                             self.right, self.value, X, scale, out)

    def add_by_partition(self, partition: np.ndarray, node_start: np.ndarray,
                         out: np.ndarray) -> None:
        """out[i] += leaf value of training row i, read from the grower's partition (the rows
        of node j are partition[node_start[j]:node_start[j] + n_samples[j]]): no tree walk."""
        _add_leaf_values_partition(self.feature, self.value, partition, node_start,
                                   self.n_samples, out)

    def feature_gains(self, n_features: int) -> np.ndarray:
        """Total split gain per feature (the gain importance of XGBoost / sklearn's MDI)."""
        internal = self.feature != LEAF
        return np.bincount(self.feature[internal], weights=self.gain[internal],
                           minlength=n_features)


def add_ensemble_values(trees: list[Tree], X: np.ndarray, out: np.ndarray) -> None:
    """out += the sum of the trees' leaf values on raw X, in one pass: blocks of ROW_BLOCK rows
    in parallel, each block walked down every tree while its rows stay in cache. Each row adds
    the trees in list order, the sums of calling add_to tree after tree.

    The rows of a block descend a tree in lockstep, one level per step for as many steps as
    the tree is deep: the rows' walks are independent chains of loads that the processor
    overlaps (a single walk waits for each load; 2x faster measured). For that every leaf
    loops to itself: it tests feature 0 against +inf with NaN going left, and its left child
    is itself. The trees are packed into one array of (feature, left child) pairs; the
    growers create children in pairs, right = left + 1 (partition.record_split), so the
    right child is not stored.
    """
    offsets = np.cumsum([0] + [len(tree.feature) for tree in trees[:-1]])
    feature = np.concatenate([tree.feature for tree in trees])
    left = np.concatenate([tree.left + offset for tree, offset in zip(trees, offsets,
                                                                        strict=True)])
    right = np.concatenate([tree.right + offset for tree, offset in zip(trees, offsets,
                                                                          strict=True)])
    leaf = feature == LEAF
    if not np.array_equal(right[~leaf], left[~leaf] + 1):
        raise ValueError("add_ensemble_values needs right[i] == left[i] + 1 at every split")
    children = np.column_stack([np.where(leaf, 0, feature),
                                np.where(leaf, np.arange(len(feature)), left)]).astype(np.int32)
    _add_ensemble_values_raw(np.asarray(offsets, dtype=np.int64),
                             np.array([tree.depth for tree in trees], dtype=np.int64), children,
                             np.where(leaf, np.inf, np.concatenate([t.threshold for t in trees])),
                             leaf | np.concatenate([t.missing_left for t in trees]),
                             np.concatenate([t.value for t in trees]), X, out)


ROW_BLOCK = 64


@njit(cache=True, parallel=True)
def _add_ensemble_values_raw(roots, depths, children, threshold, missing_left, value, X, out):
    n_rows = X.shape[0]
    for block in prange((n_rows + ROW_BLOCK - 1) // ROW_BLOCK):
        first = block * ROW_BLOCK
        n_block = min(ROW_BLOCK, n_rows - first)
        nodes = np.empty(ROW_BLOCK, dtype=np.int64)
        for tree in range(roots.shape[0]):
            nodes[:n_block] = roots[tree]
            for _ in range(depths[tree]):
                for r in range(n_block):
                    node = nodes[r]
                    x = X[first + r, children[node, 0]]
                    go_right = (not missing_left[node]) if np.isnan(x) else x > threshold[node]
                    nodes[r] = children[node, 1] + go_right
            for r in range(n_block):
                for k in range(value.shape[1]):
                    out[first + r, k] += value[nodes[r], k]


@njit(cache=True, parallel=True)
def _add_leaf_values_raw(feature, threshold, missing_left, left, right, value, X, scale, out):
    for i in prange(X.shape[0]):
        node = 0
        while feature[node] != LEAF:
            x = X[i, feature[node]]
            if np.isnan(x):
                go_left = missing_left[node]
            else:
                go_left = x <= threshold[node]
            node = left[node] if go_left else right[node]
        for k in range(value.shape[1]):
            out[i, k] += scale * value[node, k]


@njit(cache=True, parallel=True)
def _leaf_index_binned(feature, threshold_bin, missing_left, left, right, codes):
    leaf = np.empty(codes.shape[0], dtype=np.int32)
    for i in prange(codes.shape[0]):
        node = 0
        while feature[node] != LEAF:
            code = codes[i, feature[node]]
            if code == MISSING_BIN:
                go_left = missing_left[node]
            else:
                go_left = code <= threshold_bin[node]
            node = left[node] if go_left else right[node]
        leaf[i] = node
    return leaf


@njit(cache=True, parallel=True)
def _add_leaf_values_binned(feature, threshold_bin, missing_left, left, right, value, codes,
                            scale, out):
    leaf = _leaf_index_binned(feature, threshold_bin, missing_left, left, right, codes)
    for i in prange(codes.shape[0]):
        for k in range(value.shape[1]):
            out[i, k] += scale * value[leaf[i], k]


@njit(cache=True, parallel=True)
def _add_leaf_values_partition(feature, value, partition, node_start, n_samples, out):
    for node in prange(feature.shape[0]):
        if feature[node] == LEAF:
            for position in range(node_start[node], node_start[node] + n_samples[node]):
                for k in range(value.shape[1]):
                    out[partition[position], k] += value[node, k]


@njit(cache=True)
def _node_depths(left, right):
    depth = np.zeros(left.shape[0], dtype=np.int32)
    for node in range(left.shape[0]):
        if left[node] != LEAF:
            depth[left[node]] = depth[node] + 1
            depth[right[node]] = depth[node] + 1
    return depth
