import numpy as np
import pytest

from ensembles.engine.binning import MISSING_BIN, N_BIN_SLOTS
from ensembles.engine.histogram import (
    CHUNK_ROWS,
    GRADIENT_CHANNELS,
    MAX_CHUNKS,
    build_gradient_histograms,
    build_node_histogram,
)


def _gradient_node(n_rows, seed):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 40, size=(n_rows, 6)).astype(np.uint8)
    codes[rng.uniform(size=codes.shape) < 0.1] = MISSING_BIN
    stats = rng.normal(size=(n_rows, 2))
    rows = rng.permutation(n_rows).astype(np.int32)
    return codes, stats, rows


def _row_by_row(codes, stats, node, features):
    """(g, h, count, 0) per feature and bin, one row at a time in partition order."""
    expected = np.zeros((len(features), N_BIN_SLOTS, GRADIENT_CHANNELS))
    for k, feature in enumerate(features):
        np.add.at(expected[k, :, :2], codes[node, feature], stats[node])
        np.add.at(expected[k, :, 2], codes[node, feature], 1.0)
    return expected


@pytest.mark.parametrize("features", [[0, 1, 2, 3, 4, 5], [1, 4, 5]])
def test_gradient_histograms_equal_numpy_sums_in_row_order(features):
    codes, stats, rows = _gradient_node(300, 0)
    features = np.array(features, dtype=np.int32)
    hist = np.full((len(features), N_BIN_SLOTS, GRADIENT_CHANNELS), np.nan)
    build_gradient_histograms(codes, rows, 10, 250, stats, features, hist)
    assert np.array_equal(hist, _row_by_row(codes, stats, rows[10:250], features))


def test_chunked_node_histogram_adds_the_chunks_in_order():
    n_rows = 3 * CHUNK_ROWS + 5
    codes, stats, rows = _gradient_node(n_rows, 1)
    features = np.arange(6, dtype=np.int32)
    hist = np.empty((6, N_BIN_SLOTS, GRADIENT_CHANNELS))
    chunk_hists = np.empty((MAX_CHUNKS, *hist.shape))
    build_node_histogram(codes, rows, 0, n_rows, stats, features, hist, chunk_hists)
    chunks = [_row_by_row(codes, stats, rows[lo:lo + CHUNK_ROWS], features)
              for lo in range(0, n_rows, CHUNK_ROWS)]
    assert len(chunks) == 4
    assert np.array_equal(hist, ((chunks[0] + chunks[1]) + chunks[2]) + chunks[3])
