import numpy as np
import pytest

from ensembles.engine.binning import MISSING_BIN
from ensembles.engine.categories import SET_WORDS
from ensembles.engine.node_arrays import empty_nodes
from ensembles.engine.partition import PARTITION_CHUNK_ROWS, SERIAL_ROWS, partition_batch


@pytest.mark.parametrize("missing_left", [False, True])
@pytest.mark.parametrize("n_rows", [SERIAL_ROWS - 700,
                                    max(SERIAL_ROWS, 3 * PARTITION_CHUNK_ROWS) + 700],
                         ids=["serial", "parallel"])
def test_batch_partition_is_stable_within_each_node(missing_left, n_rows):
    """A batch below SERIAL_ROWS is partitioned node after node, a larger one in parallel
    chunks: both are numpy's stable partition."""
    rng = np.random.default_rng(4)
    columns = np.asfortranarray(rng.integers(0, 30, size=(n_rows, 3)).astype(np.uint8))
    columns[rng.uniform(size=columns.shape) < 0.1] = MISSING_BIN
    partition = rng.permutation(n_rows).astype(np.int32)
    before = partition.copy()
    # node 0: rows [0, 500) counted, not moved; node 1: [500, 500 + 4/5 of the rest) (2.4
    # chunks in the parallel batch); node 2: the rest
    node_start = np.array([0, 500, 500 + (n_rows - 500) * 4 // 5])
    node_stop = np.array([500, node_start[2], n_rows])
    feature = np.array([0, 2, 1])
    threshold_bin = np.array([0, 11, 20])
    tree = empty_nodes(3)._replace(feature=feature, threshold_bin=threshold_bin,
                                   missing_left=np.full(3, missing_left),
                                   node_start=node_start, node_stop=node_stop)
    n_left = partition_batch(columns, np.array([2, 1, 0]), np.array([True, True, False]), tree,
                             np.zeros((1, SET_WORDS), dtype=np.uint32), partition,
                             np.empty_like(partition))
    assert np.array_equal(partition[:500], before[:500])
    code = columns[before[:500], feature[0]]
    assert n_left[2] == np.where(code == MISSING_BIN, missing_left, code <= threshold_bin[0]).sum()
    for node in (1, 2):
        rows = before[node_start[node]:node_stop[node]]
        code = columns[rows, feature[node]]
        left = np.where(code == MISSING_BIN, missing_left, code <= threshold_bin[node])
        assert np.array_equal(partition[node_start[node]:node_stop[node]],
                              np.concatenate([rows[left], rows[~left]]))
        assert n_left[2 - node] == left.sum()
