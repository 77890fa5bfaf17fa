import numpy as np
import pytest

from ensembles.engine.binning import MISSING_BIN
from ensembles.engine.histogram import (
    BLOCK_FEATURES,
    CHUNK_ROWS,
    COUNTED_CHANNELS,
    GRADIENT_CHANNELS,
    HISTOGRAM_BINS,
    MAX_CHUNKS,
    build_gradient_histograms,
    build_node_histograms,
    empty_chunk_histograms,
    node_chunk_rows,
)

N_CODES = 40  # each feature's bins (codes 0..39 and the missing bin)


def _gradient_node(n_rows, seed, n_features=6):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, N_CODES, size=(n_rows, n_features)).astype(np.uint8)
    codes[rng.uniform(size=codes.shape) < 0.1] = MISSING_BIN
    stats = rng.normal(size=(n_rows, 2))
    rows = rng.permutation(n_rows).astype(np.int32)
    return codes, stats, rows


def _row_by_row(codes, stats, node, features, n_channels=GRADIENT_CHANNELS):
    """(g, h), or (g, h, count, 0) for COUNTED_CHANNELS, per feature and bin, one row at a
    time in partition order; the padding bins zero."""
    expected = np.zeros((len(features), HISTOGRAM_BINS, n_channels))
    for k, feature in enumerate(features):
        np.add.at(expected[k, :, :2], codes[node, feature], stats[node])
        if n_channels == COUNTED_CHANNELS:
            np.add.at(expected[k, :, 2], codes[node, feature], 1.0)
    return expected


def _bins(n_features):
    """Every feature's bin count (binning.BinMapper.n_bins_)."""
    return np.full(n_features, N_CODES)


def _used(hist):
    """The used bins of histograms (..., HISTOGRAM_BINS, channels): 0..N_CODES-1 and the
    missing bin, the only ones a build, a merge and a subtraction touch."""
    return hist[..., [*range(N_CODES), MISSING_BIN], :]


def _unused(hist):
    """The other bins: never written, they keep what the slot held (here NaN)."""
    return hist[..., N_CODES:MISSING_BIN, :]


@pytest.mark.parametrize("n_channels", [GRADIENT_CHANNELS, COUNTED_CHANNELS])
@pytest.mark.parametrize("features", [[0, 1, 2, 3, 4, 5], [1, 4, 5]])
def test_gradient_histograms_equal_numpy_sums_in_row_order(features, n_channels):
    codes, stats, rows = _gradient_node(300, 0)
    features = np.array(features, dtype=np.int32)
    hist = np.full((len(features), HISTOGRAM_BINS, n_channels), np.nan)
    build_gradient_histograms(codes, rows, 10, 250, stats, features, _bins(6), 1, len(features),
                              hist)
    assert np.isnan(hist[0]).all()  # outside the feature range asked for
    assert np.array_equal(_used(hist[1:]), _used(_row_by_row(codes, stats, rows[10:250],
                                                             features, n_channels)[1:]))
    assert np.isnan(_unused(hist)).all()


@pytest.mark.parametrize("n_channels", [GRADIENT_CHANNELS, COUNTED_CHANNELS])
def test_node_histograms_of_a_batch_add_a_large_nodes_chunks_in_order(n_channels):
    """... and a node with a sibling slot (the large node's) subtracts its histogram there."""
    n_large = 3 * CHUNK_ROWS + 5
    codes, stats, rows = _gradient_node(n_large + 400, 1)
    features = np.array([0, 2, 3, 5], dtype=np.int32)
    node_start = np.array([0, n_large, n_large + 100])
    node_stop = np.array([n_large, n_large + 100, n_large + 400])
    node_slot = np.array([2, 0, 1])
    pool = np.full((4, len(features), HISTOGRAM_BINS, n_channels), np.nan)
    parent = _row_by_row(codes, stats, rows[n_large:], features, n_channels)  # nodes 1 and 2
    pool[3] = parent
    chunk_pool = empty_chunk_histograms(len(rows), len(features), n_channels)  # 3 more chunks
    build_node_histograms(codes, rows, stats, features, _bins(6), np.array([0, 1, 2]),
                          node_start, node_stop, node_slot, pool, chunk_pool,
                          np.array([-1, 3, -1]))
    assert np.array_equal(_used(pool[3]), _used(parent - pool[node_slot[1]]))
    assert np.array_equal(_unused(pool[3]), _unused(parent))  # left as they were
    assert np.isnan(_unused(pool[:3])).all()
    chunk_rows = -(-n_large // 4)  # four equal chunks: even, at most n_large // CHUNK_ROWS + 1
    chunks = [_row_by_row(codes, stats, rows[lo:min(lo + chunk_rows, n_large)], features,
                          n_channels)
              for lo in range(0, n_large, chunk_rows)]
    assert len(chunks) == 4 and MAX_CHUNKS >= 4
    assert np.array_equal(_used(pool[2]),
                          _used(((chunks[0] + chunks[1]) + chunks[2]) + chunks[3]))
    for node in (1, 2):
        node_rows = rows[node_start[node]:node_stop[node]]
        assert np.array_equal(_used(pool[node_slot[node]]),
                              _used(_row_by_row(codes, stats, node_rows, features, n_channels)))


@pytest.mark.parametrize(("n_rows", "n_chunks", "rows_per_chunk"), [
    (1000, 1, 1000),                           # below CHUNK_ROWS: one chunk
    (CHUNK_ROWS, 2, CHUNK_ROWS // 2),          # two, not one of CHUNK_ROWS and one empty
    (2 * CHUNK_ROWS + 1, 2, CHUNK_ROWS + 1),   # three allowed, two taken: an even count
    (240_000, 8, 30_000),                      # not seven of 32768 and one of 10624
    (10 ** 7, MAX_CHUNKS, 1_250_000),
])
def test_a_large_node_is_cut_into_an_even_number_of_equal_chunks(n_rows, n_chunks,
                                                                  rows_per_chunk):
    """So that two threads finish a node together, within the chunk buffers' room of
    n_rows // CHUNK_ROWS extra chunks."""
    chunk_rows = node_chunk_rows(np.array([n_rows], dtype=np.int64))[0]
    assert chunk_rows == rows_per_chunk
    assert -(-n_rows // chunk_rows) == n_chunks <= n_rows // CHUNK_ROWS + 1


def test_a_lone_small_node_built_in_feature_blocks_has_the_row_by_row_sums():
    codes, stats, rows = _gradient_node(500, 2)
    features = np.arange(6, dtype=np.int32)
    pool = np.full((1, 6, HISTOGRAM_BINS, GRADIENT_CHANNELS), np.nan)
    build_node_histograms(codes, rows, stats, features, _bins(6), np.array([0]), np.array([50]),
                          np.array([450]), np.array([0]), pool,
                          empty_chunk_histograms(len(rows), len(features), GRADIENT_CHANNELS),
                          np.array([-1]))
    assert np.array_equal(_used(pool[0]), _used(_row_by_row(codes, stats, rows[50:450],
                                                            features)))


@pytest.mark.parametrize("every_column", [True, False])
def test_a_wide_batch_built_in_blocks_of_features_has_the_row_by_row_sums(every_column):
    n_features = 2 * BLOCK_FEATURES + 7  # two whole blocks and a partial one
    codes, stats, rows = _gradient_node(CHUNK_ROWS + 300, 3, n_features)
    features = np.arange(n_features, dtype=np.int32)
    if not every_column:
        features = features[1::2]  # a column subset (colsample): blocks of its positions
    node_start, node_stop = np.array([0, CHUNK_ROWS + 100]), np.array([CHUNK_ROWS + 100,
                                                                      CHUNK_ROWS + 300])
    pool = np.full((2, len(features), HISTOGRAM_BINS, GRADIENT_CHANNELS), np.nan)
    build_node_histograms(codes, rows, stats, features, _bins(n_features), np.array([0, 1]),
                          node_start, node_stop, np.array([1, 0]), pool,
                          empty_chunk_histograms(len(rows), len(features), GRADIENT_CHANNELS),
                          np.array([-1, -1]))
    large = rows[:CHUNK_ROWS + 100]  # two chunks of equal rows
    half = (CHUNK_ROWS + 100) // 2
    expected = _row_by_row(codes, stats, large[:half], features) + _row_by_row(
        codes, stats, large[half:], features)
    assert np.array_equal(_used(pool[1]), _used(expected))
    assert np.array_equal(_used(pool[0]), _used(_row_by_row(codes, stats,
                                                            rows[CHUNK_ROWS + 100:], features)))
