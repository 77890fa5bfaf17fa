"""The flat node arrays both growers fill, and the rules of growth they share.

Node i of a tree is entry i of every array (tree.Tree): its split (feature, threshold_bin,
missing_left, gain), its children (left_child, right_child; LEAF for a leaf) and its rows
partition[node_start:node_stop]. An open node (not yet split or closed) also holds its best
split (best_gain, best_feature, best_bin, best_missing_left).

Conventions, the same in both growers: max_depth <= 0 and max_leaves <= 0 mean no limit
(XGBoost's 0); a node may be split with at least max(min_samples_split,
2 max(min_samples_leaf, 1)) rows (scikit-learn's rule; each child needs a row).

The arrays travel as two records, NodeArrays (the tree's nodes) and OpenNodes (the best splits
of the open nodes): numba passes a NamedTuple of arrays as its arrays, so a kernel takes the
record whole and reads the fields it needs.

Kernels pass each other typed integers, never int literals: numba compiles a callee once more
for every literal argument (`ROOT`, not 0), and a counter that starts from a literal is one at
first (`n_nodes = np.int64(1)`, not 1). Those extra compilations were a fifth of a cold
start: 69 s became 56 s on one process (measured).
"""

from typing import NamedTuple

import numpy as np
from numba import njit

from ensembles.engine.borrowing import borrowing
from ensembles.engine.categories import CATEGORY_SET, SET_WORDS
from ensembles.engine.splitting import improves
from ensembles.engine.tree import LEAF

ROOT = np.int64(0)  # the root's node id (and depth), typed: see the module docstring
MAX_DEPTH_BOUND = 30  # a deeper limit bounds nothing: 2^31 leaves exceed any int32 row count


@borrowing
def max_leaf_count(n_rows, max_depth, max_leaves):
    """L = min(n_rows, max_leaves, 2^max_depth), at least 1: every leaf holds a row, and a
    tree of L leaves has 2L - 1 nodes."""
    leaf_bound = max(n_rows, 1)
    if max_leaves > 0:
        leaf_bound = min(leaf_bound, max_leaves)
    if 0 < max_depth <= MAX_DEPTH_BOUND:
        leaf_bound = min(leaf_bound, 2 ** max_depth)
    return leaf_bound


class NodeArrays(NamedTuple):
    """Entry i of each array is node i (module docstring): its split, its children (LEAF for
    a leaf), its rows partition[node_start:node_stop] and its depth."""

    feature: np.ndarray  # int32, LEAF for a leaf
    threshold_bin: np.ndarray  # int32, CATEGORY_SET for a split on a set
    missing_left: np.ndarray  # bool
    left_child: np.ndarray  # int32; the right child is left_child + 1
    right_child: np.ndarray  # int32
    gain: np.ndarray  # float64
    node_start: np.ndarray  # int32
    node_stop: np.ndarray  # int32
    node_depth: np.ndarray  # int32


class GrownTree(NamedTuple):
    """A grown tree as tree.Tree.from_grown takes it (grown_tree), one entry a node: the
    split, the children (LEAF at a leaf), the leaf value row, the gain, the training rows,
    and the category set (one row per node, or one row when no node may split on a set)."""

    feature: np.ndarray
    threshold_bin: np.ndarray
    missing_left: np.ndarray
    left_child: np.ndarray
    right_child: np.ndarray
    value: np.ndarray
    gain: np.ndarray
    n_samples: np.ndarray
    category_bits: np.ndarray


class OpenNodes(NamedTuple):
    """Whether each node is open, and the best split found for it so far."""

    is_open: np.ndarray  # bool
    best_gain: np.ndarray  # float64, -inf: none found
    best_feature: np.ndarray  # int32, -1: none found
    best_bin: np.ndarray  # int32
    best_missing_left: np.ndarray  # bool


@njit(cache=True, nogil=True)
def empty_nodes(capacity):
    """NodeArrays for capacity nodes, unset: start_tree sets the root and record_split each
    child it makes, so a tree touches the memory of its own nodes only (a forest tree of 11k
    nodes has room for 101k: filling every entry cost 15 MB of a forest fit's peak)."""
    return NodeArrays(np.empty(capacity, dtype=np.int32), np.empty(capacity, dtype=np.int32),
                      np.empty(capacity, dtype=np.bool_), np.empty(capacity, dtype=np.int32),
                      np.empty(capacity, dtype=np.int32), np.empty(capacity),
                      np.empty(capacity, dtype=np.int32), np.empty(capacity, dtype=np.int32),
                      np.empty(capacity, dtype=np.int32))


@njit(cache=True, nogil=True)
def empty_open_nodes(capacity):
    """OpenNodes for capacity nodes, unset (empty_nodes)."""
    return OpenNodes(np.empty(capacity, dtype=np.bool_), np.empty(capacity),
                     np.empty(capacity, dtype=np.int32), np.empty(capacity, dtype=np.int32),
                     np.empty(capacity, dtype=np.bool_))


@borrowing
def start_tree(nodes, open_nodes, category_bits):
    """A tree of its root alone: a leaf at depth 0 over rows 0..0, not open, no split found,
    an empty category set. The arrays may hold an earlier tree (a reused workspace): nothing
    else is read before it is set."""
    _make_leaf(ROOT, nodes)
    nodes.node_start[ROOT] = nodes.node_stop[ROOT] = nodes.node_depth[ROOT] = 0
    _close(ROOT, open_nodes)
    for word in range(category_bits.shape[1]):
        category_bits[ROOT, word] = 0


@borrowing
def _make_leaf(node, nodes):
    """Node `node` is a leaf: no split, no children."""
    nodes.feature[node] = nodes.left_child[node] = nodes.right_child[node] = LEAF
    nodes.threshold_bin[node] = 0
    nodes.missing_left[node] = False
    nodes.gain[node] = 0.0


@borrowing
def _close(node, open_nodes):
    """Node `node` is not open and has no split found (gain -inf, feature -1)."""
    open_nodes.is_open[node] = False
    open_nodes.best_gain[node] = -np.inf
    open_nodes.best_feature[node] = -1
    open_nodes.best_bin[node] = 0
    open_nodes.best_missing_left[node] = False


@borrowing
def may_split(n_node_rows, depth, max_depth, min_samples_split, min_samples_leaf):
    """Whether a node of n_node_rows rows at `depth` may be split (module docstring)."""
    return ((max_depth <= 0 or depth < max_depth) and n_node_rows >= min_samples_split
            and n_node_rows >= 2 * max(min_samples_leaf, 1))


@borrowing
def offer_split(node, split_gain, split_feature, split_bin, split_missing_left, open_nodes):
    """Make a feature's split (admissible: gain > -inf) the node's best if it improves on the
    best of the features scanned before it (splitting.improves: ties keep the first)."""
    if improves(split_gain, open_nodes.best_gain[node]):
        open_nodes.best_gain[node] = split_gain
        open_nodes.best_feature[node] = split_feature
        open_nodes.best_bin[node] = split_bin
        open_nodes.best_missing_left[node] = split_missing_left


@borrowing
def largest_gain_open_node(open_nodes, n_nodes):
    """The open node of largest gain, the oldest on ties; -1 when none is open."""
    is_open, best_gain = open_nodes.is_open, open_nodes.best_gain
    chosen = -1
    for node in range(n_nodes):
        if is_open[node] and (chosen < 0 or best_gain[node] > best_gain[chosen]):
            chosen = node
    return chosen


@borrowing
def below_leaf_limit(n_leaves, max_leaves):
    """Whether a tree of n_leaves leaves may split once more (max_leaves <= 0: no limit)."""
    return max_leaves <= 0 or n_leaves < max_leaves


@borrowing
def admits_split(node, open_nodes, min_split_gain, n_leaves, max_leaves):
    """The rule of both growers for splitting an open node: a split was found, it gains more
    than min_split_gain, and the tree is below its leaf limit."""
    return (open_nodes.best_feature[node] >= 0 and open_nodes.best_gain[node] > min_split_gain
            and below_leaf_limit(n_leaves, max_leaves))


@borrowing
def record_split(node, n_nodes, nodes, open_nodes, category_bits):
    """Record the node's best split and create its children as nodes n_nodes (left) and
    n_nodes + 1 (right): closed leaves with their depth and an empty category set, their
    rows placed once the node's are partitioned (place_children)."""
    left_id = n_nodes
    right_id = n_nodes + 1
    nodes.feature[node] = open_nodes.best_feature[node]
    nodes.threshold_bin[node] = open_nodes.best_bin[node]
    nodes.missing_left[node] = open_nodes.best_missing_left[node]
    nodes.left_child[node] = left_id
    nodes.right_child[node] = right_id
    nodes.gain[node] = open_nodes.best_gain[node]
    nodes.node_depth[left_id] = nodes.node_depth[right_id] = nodes.node_depth[node] + 1
    for child in (left_id, right_id):
        _make_leaf(child, nodes)
        _close(child, open_nodes)
        if category_bits.shape[0] > 1:
            category_bits[child] = 0


@borrowing
def place_children(node, n_left, nodes):
    """The rows of a split node's children: its first n_left rows (partitioned) go left."""
    node_start, node_stop = nodes.node_start, nodes.node_stop
    left_id = nodes.left_child[node]
    node_start[left_id] = node_start[node]
    node_stop[left_id] = node_start[node] + n_left
    node_start[left_id + 1] = node_start[node] + n_left
    node_stop[left_id + 1] = node_stop[node]


@njit(cache=True, nogil=True)
def grown_tree(n_nodes, nodes, value, category_bits):
    """The first n_nodes nodes as tree.Tree.from_grown takes them (GrownTree);
    category_bits has one row per node, or one row when no node may split on a set
    (empty_category_sets)."""
    n_node_samples = (nodes.node_stop[:n_nodes] - nodes.node_start[:n_nodes]).astype(np.int32)
    return GrownTree(nodes.feature[:n_nodes].copy(), nodes.threshold_bin[:n_nodes].copy(),
                     nodes.missing_left[:n_nodes].copy(), nodes.left_child[:n_nodes].copy(),
                     nodes.right_child[:n_nodes].copy(), value[:n_nodes].copy(),
                     nodes.gain[:n_nodes].copy(), n_node_samples,
                     category_bits[:n_nodes].copy())


@njit(cache=True, nogil=True)
def empty_category_sets(capacity, categorical):
    """A category set per node when some feature is categorical, else one unused row; unset
    (start_tree empties the root's, record_split each child's)."""
    n_rows = capacity if np.any(categorical) else 1
    return np.empty((n_rows, SET_WORDS), dtype=np.uint32)


@borrowing
def offer_set_split(node, split_gain, split_feature, split_missing_left, candidate_bits,
                    open_nodes, category_bits):
    """offer_split for a split on a set of categories, whose set is kept when it wins."""
    offer_split(node, split_gain, split_feature, CATEGORY_SET, split_missing_left, open_nodes)
    if open_nodes.best_feature[node] == split_feature:
        for word in range(candidate_bits.shape[0]):  # a loop: an array assignment allocates
            category_bits[node, word] = candidate_bits[word]
