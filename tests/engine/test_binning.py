import numpy as np

from ensembles.engine.binning import MISSING_BIN, BinMapper


def test_few_distinct_values_get_one_bin_each_in_order():
    rng = np.random.default_rng(0)
    values = np.sort(rng.choice(1000, size=200, replace=False)).astype(float)
    column = rng.choice(values, size=5000)
    codes = BinMapper().fit_transform(column[:, None])[:, 0]
    assert np.array_equal(np.sort(np.unique(codes)), np.arange(200))
    assert np.array_equal(codes, np.searchsorted(values, column))


def test_code_test_equals_raw_threshold_test():
    """code <= b  <=>  x <= threshold_value(b): splits found on codes are valid on raw values."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(20000, 3))
    mapper = BinMapper(max_bins=64).fit(X)
    codes = mapper.transform(X)
    for feature in range(3):
        for b in range(mapper.n_bins_[feature] - 1):
            threshold = mapper.threshold_value(feature, b)
            assert np.array_equal(codes[:, feature] <= b, X[:, feature] <= threshold)


def test_many_distinct_values_give_quantile_bins():
    rng = np.random.default_rng(2)
    X = rng.exponential(size=(100000, 1))
    codes = BinMapper(max_bins=255).fit_transform(X)[:, 0]
    counts = np.bincount(codes)
    assert len(counts) == 255
    assert counts.min() > 0.8 * len(X) / 255 and counts.max() < 1.2 * len(X) / 255


def test_nan_goes_to_the_missing_bin_and_is_ignored_by_edges():
    X = np.array([[1.0], [np.nan], [2.0], [3.0], [np.nan]])
    mapper = BinMapper().fit(X)
    assert np.allclose(mapper.bin_edges_[0], [1.5, 2.5])
    assert mapper.transform(X)[:, 0].tolist() == [0, MISSING_BIN, 1, 2, MISSING_BIN]


def test_unseen_values_fall_in_the_end_bins():
    mapper = BinMapper().fit(np.array([[1.0], [2.0], [3.0]]))
    assert mapper.transform(np.array([[-10.0], [10.0]]))[:, 0].tolist() == [0, 2]


def test_edges_fitted_on_a_row_sample_hold_equal_shares_of_all_rows():
    X = np.random.default_rng(3).normal(size=(50_000, 2))
    sampled = BinMapper(max_bins=16, sample_rows=10_000).fit(X)
    assert not np.array_equal(sampled.bin_edges_[0],
                              BinMapper(max_bins=16, sample_rows=None).fit(X).bin_edges_[0])
    shares = np.bincount(sampled.transform(X)[:, 0], minlength=16) / len(X)
    assert np.allclose(shares, 1 / 16, atol=0.01)  # sampling error of 10k rows: 0.0024
    again = BinMapper(max_bins=16, sample_rows=10_000).fit(X)
    assert all(np.array_equal(a, b) for a, b in zip(sampled.bin_edges_, again.bin_edges_,
                                                      strict=True))


def test_categorical_columns_get_their_categories_among_numeric_ones():
    """A categorical column's code is its category (a whole value 0..254 itself, other values
    their rank among those seen at fit), MISSING_BIN for NaN and for a value it cannot hold,
    binned in the same pass as the numeric columns, in either memory order."""
    train = np.array([[0.5, 3.0, -1.5], [1.5, 0.0, 7.25], [2.5, 5.0, 2.0], [3.5, 1.0, -1.5]])
    mapper = BinMapper(categorical=np.array([False, True, True])).fit(train)
    X = np.array([[0.7, 5.0, 7.25], [np.nan, np.nan, np.nan], [9.0, 2.5, 3.0],
                  [-4.0, -1.0, 2.0], [1.0, 300.0, -1.5], [3.0, 9.0, -1.5]])
    expected = [[0, 5, 2], [MISSING_BIN] * 3, [3, MISSING_BIN, MISSING_BIN],
                [0, MISSING_BIN, 1], [0, MISSING_BIN, 0], [2, 9, 0]]
    for order in ("C", "F"):
        codes = mapper.transform(np.asarray(X, order=order), order=order)
        assert codes.flags[f"{order}_CONTIGUOUS"]
        assert codes.tolist() == expected
