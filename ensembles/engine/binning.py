"""Quantile binning of raw features into uint8 codes, with one bin reserved for missing values.

A feature with edges e_0 < e_1 < ... < e_{m-2} has m bins: code b holds the values x with
e_{b-1} < x <= e_b, so "x <= e_b" and "code <= b" are the same test. NaN gets MISSING_BIN.

A categorical feature's values are its categories. When they are whole numbers 0..MAX_CATEGORY
the code is the value itself (n_bins: the largest category seen + 1). Otherwise (more than
MAX_CATEGORY + 1 levels, a level above MAX_CATEGORY, negative or fractional values) the
feature's values are mapped to codes as LightGBM bins a many-level categorical feature: with at
most MAX_CATEGORY + 1 distinct values, each is a category (code: its rank among them); with
more, the MAX_CATEGORY most frequent keep a category each (ranked by value; ties in frequency go
to the smaller value) and all the rarer ones share category MAX_CATEGORY. Later (prediction,
validation rows) a value not seen at fit is an unknown category: it gets MISSING_BIN and follows
the missing values (raw_categories maps raw values for the trees' raw prediction).
"""

from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np
from numba import njit, prange

MAX_BINS = 255
MISSING_BIN = 255
MAX_CATEGORY = MISSING_BIN - 1  # categories 0..254: at most 255 per feature
N_BIN_SLOTS = 256  # MAX_BINS value bins + the missing-value bin
BIN_SAMPLE_ROWS = 200_000  # rows the edges are fitted on, as LightGBM and scikit-learn
SERIAL_VALUES = 1 << 20  # rows x numeric features below which the edges are fitted without a
# thread pool (8,000 x 70: 4.7 ms on one thread, 5.5 on two; 20,000 x 70: 11.4 and 9.6)


def fit_bin_edges(column: np.ndarray, max_bins: int = MAX_BINS) -> np.ndarray:
    """Upper bin edges of one feature, ignoring NaN.

    With at most `max_bins` distinct values the edges are the midpoints between consecutive
    distinct values, so binning loses nothing; otherwise they are `max_bins - 1` quantiles.
    """
    return _edges_and_upper_values(_sorted_values(np.array(column, dtype=np.float64)),
                                   max_bins, inner_quantiles(max_bins))[0]


def inner_quantiles(max_bins: int) -> np.ndarray:
    """The max_bins - 1 quantile levels of the edges of a feature of many distinct values:
    k / max_bins, k = 1 .. max_bins - 1 (np.linspace's values)."""
    return np.linspace(0.0, 1.0, max_bins + 1)[1:-1]


def _sorted_values(values: np.ndarray) -> np.ndarray:
    """The non-missing values, sorted in place (numpy's sort: numba's took 10x longer): their
    leading part (numpy sorts NaN last, and searchsorted finds the first NaN)."""
    values.sort()
    return values[:np.searchsorted(values, np.nan)]


@njit(cache=True, nogil=True)
def _edges_and_upper_values(values, max_bins, quantiles):
    """fit_bin_edges of sorted non-missing values (quantiles: inner_quantiles(max_bins)), and
    the largest value of each bin (NaN for an empty bin). Compiled: its numpy calls were
    three quarters of a feature's binning on a few thousand rows."""
    distinct = _first_distinct(values, max_bins + 1)
    if distinct.shape[0] <= max_bins:
        edges = (distinct[:-1] + distinct[1:]) / 2.0
    else:
        edges = np.unique(midpoint_quantiles(values, quantiles))
        edges = edges[edges < values[-1]]
    upper_values = np.full(N_BIN_SLOTS, np.nan)
    n_values = values.shape[0]
    for b in range(edges.shape[0] + 1 if n_values else 0):
        # the bin's largest value: the last one <= its upper edge (the last value for the
        # last bin), if it lies in the bin
        lower = edges[b - 1] if b > 0 else -np.inf
        upper = edges[b] if b < edges.shape[0] else np.inf
        last = (np.searchsorted(values, upper, side="right") - 1 if b < edges.shape[0]
                else n_values - 1)
        largest = values[max(last, 0)]
        upper_values[b] = largest if lower < largest <= upper else np.nan
    return edges, upper_values


@njit(cache=True, nogil=True)
def _first_distinct(values, max_count):
    """The first max_count distinct values of sorted values (all of them when fewer)."""
    distinct = np.empty(max_count)
    n_distinct = 0
    for i in range(values.shape[0]):
        if i == 0 or values[i] != values[i - 1]:
            if n_distinct == max_count:
                break
            distinct[n_distinct] = values[i]
            n_distinct += 1
    return distinct[:n_distinct]


@njit(cache=True, nogil=True)
def _gather_column(X, rows, feature, out):
    """out[i] = X[rows[i], feature] (numpy's fancy indexing of a strided column took 3x
    longer, and a temporary)."""
    for i in range(rows.shape[0]):
        out[i] = X[rows[i], feature]


@njit(cache=True, nogil=True)
def midpoint_quantiles(sorted_values, quantiles):
    """np.quantile(sorted_values, quantiles, method="midpoint") of values already sorted,
    without numpy's partition: at position i = (n - 1) q, v[i] when i is whole, else
    v[j + 1] - (v[j + 1] - v[j]) / 2 with j = floor(i) (numpy's interpolation, bit for bit)."""
    last = sorted_values.shape[0] - 1
    out = np.empty(quantiles.shape[0])
    for k in range(quantiles.shape[0]):
        position = last * quantiles[k]
        below = np.int64(np.floor(position))
        low = sorted_values[below]
        high = sorted_values[min(below + 1, last)]
        out[k] = low if below == np.ceil(position) else high - (high - low) * 0.5
    return out


class BinMapper:
    """Maps a float matrix to uint8 codes, one set of edges per feature. Features are fitted
    and coded on numba's current number of threads (results do not depend on it).

    With more than `sample_rows` rows the edges are fitted on that many rows drawn without
    replacement (a fixed seed), as LightGBM (bin_construct_sample_cnt) and scikit-learn's
    HistGradientBoosting (subsample) do: sorting 800k rows per feature took a twentieth of a
    100-round fit. None: every row."""

    def __init__(self, max_bins: int = MAX_BINS, sample_rows: int | None = BIN_SAMPLE_ROWS,
                 categorical: np.ndarray | None = None):
        if not 2 <= max_bins <= MAX_BINS:
            raise ValueError(f"max_bins must be in [2, {MAX_BINS}], got {max_bins}")
        self.max_bins = max_bins
        self.sample_rows = sample_rows
        self.categorical = categorical

    def fit(self, X: np.ndarray) -> "BinMapper":
        """Edges per feature, and bin_upper_values_[j, b]: the largest training value of
        feature j in bin b (NaN for an empty bin), the raw scale random thresholds are drawn on.
        categorical_: the bool mask of categorical features (module docstring)."""
        self.categorical_ = (np.zeros(X.shape[1], dtype=np.bool_) if self.categorical is None
                             else np.asarray(self.categorical, dtype=np.bool_))
        if self.sample_rows is not None and X.shape[0] > self.sample_rows:
            rng = np.random.default_rng(0)
            rows = np.sort(rng.choice(X.shape[0], self.sample_rows, replace=False))
        else:
            rows = np.arange(X.shape[0])
        numerical = np.flatnonzero(~self.categorical_)
        n_threads = max(1, min(numba.get_num_threads(), len(numerical)))
        if len(rows) * len(numerical) < SERIAL_VALUES:
            n_threads = 1  # no thread pool: its start was half the binning of 2,000 rows
        # a buffer per thread, allocated here: what a thread allocates stays in its own malloc
        # arena after the fit (two threads' temporaries of 200k rows kept 13 MB)
        buffers = np.empty((n_threads, len(rows)))
        quantiles = inner_quantiles(self.max_bins)

        def fit_features(thread: int) -> list:
            fitted = []
            for j in numerical[thread::n_threads]:
                _gather_column(X, rows, j, buffers[thread])
                fitted.append(_edges_and_upper_values(_sorted_values(buffers[thread]),
                                                      self.max_bins, quantiles))
            return fitted

        if n_threads == 1:
            groups = [fit_features(0)]
        else:
            with ThreadPoolExecutor(n_threads) as pool:
                groups = list(pool.map(fit_features, range(n_threads)))
        fitted = [groups[k % n_threads][k // n_threads] for k in range(len(numerical))]
        of_numerical = iter(fitted)
        fitted = [(np.empty(0), np.full(N_BIN_SLOTS, np.nan)) if is_categorical
                  else next(of_numerical) for is_categorical in self.categorical_]
        self.bin_edges_ = [edges for edges, _ in fitted]
        self.n_bins_ = np.array([len(e) + 1 for e in self.bin_edges_], dtype=np.int64)
        self.category_maps_ = {}  # feature -> (sorted values seen, their codes); else identity
        for j in np.flatnonzero(self.categorical_):
            self.n_bins_[j], category_map = _category_bins(X[:, j])
            if category_map is not None:
                self.category_maps_[j] = category_map
        self.bin_upper_values_ = np.array([upper for _, upper in fitted]).reshape(
            X.shape[1], N_BIN_SLOTS)
        self._padded_edges = np.full((X.shape[1], MAX_BINS), np.inf)
        for j, edges in enumerate(self.bin_edges_):
            self._padded_edges[j, :len(edges)] = edges
        return self

    def transform(self, X: np.ndarray, order: str = "F") -> np.ndarray:
        """uint8 codes of X: Fortran order (one feature's codes contiguous, for the CART
        growers) or C order (one row's codes contiguous, for the gradient histograms)."""
        codes = np.empty(X.shape, dtype=np.uint8, order=order)
        mapped = np.array(sorted(self.category_maps_), dtype=np.int64)
        _bin_rows(X, self._padded_edges, np.setdiff1d(np.flatnonzero(self.categorical_), mapped),
                  codes)
        if len(mapped):  # their codes from their mapped values, not from a mapped copy of X
            values = np.column_stack([self._category_column(X[:, j], j) for j in mapped])
            mapped_codes = np.empty(values.shape, dtype=np.uint8)
            _bin_rows(values, self._padded_edges[mapped], np.arange(len(mapped)), mapped_codes)
            codes[:, mapped] = mapped_codes
        return codes

    def raw_categories(self, X: np.ndarray) -> np.ndarray:
        """X with each mapped categorical feature's values as their codes (NaN: missing or
        unseen at fit), the values the trees' raw prediction reads (categories.category_code);
        X itself when no feature is mapped."""
        if not getattr(self, "category_maps_", None):
            return X
        X = np.array(X, dtype=np.float64)
        for j in self.category_maps_:
            X[:, j] = self._category_column(X[:, j], j)
        return X

    def _category_column(self, column: np.ndarray, feature: int) -> np.ndarray:
        """A categorical column as codes: itself, or through the feature's map (module
        docstring; NaN for a value not seen at fit)."""
        if feature not in self.category_maps_:
            return column
        values, category = self.category_maps_[feature]
        at = np.minimum(np.searchsorted(values, column), len(values) - 1)
        return np.where(values[at] == column, category[at], np.nan)

    def fit_transform(self, X: np.ndarray) -> np.ndarray:
        return self.fit(X).transform(X)

    def threshold_value(self, feature: int, threshold_bin: int) -> float:
        """The raw threshold of a split "code <= threshold_bin": the bin's upper edge."""
        return float(self.bin_edges_[feature][threshold_bin])

    def raw_thresholds(self, feature: np.ndarray, threshold_bin: np.ndarray) -> np.ndarray:
        """threshold_value for every node of a tree; NaN at leaves (feature < 0) and at splits
        on a set of categories (threshold_bin < 0), +inf for a split on the last bin (every
        value left, only missing values right)."""
        thresholds = np.empty(feature.shape)
        raw_thresholds_into(feature, threshold_bin, self.n_bins_, self._padded_edges, thresholds)
        return thresholds

    @property
    def padded_edges(self) -> np.ndarray:
        """(n_features, MAX_BINS): each feature's edges, padded with +inf (the compiled
        searches' and raw_thresholds_into's table)."""
        return self._padded_edges


def _category_bins(column: np.ndarray) -> tuple[int, tuple | None]:
    """(n_bins, map) of a categorical feature (module docstring): map None when its values are
    already categories 0..MAX_CATEGORY, else (the sorted distinct values, their codes)."""
    values = column[~np.isnan(column)]
    if not len(values):
        return 1, None
    if values.min() >= 0 and values.max() <= MAX_CATEGORY and np.all(values == np.floor(values)):
        return int(values.max()) + 1, None
    distinct, counts = np.unique(values, return_counts=True)
    category = np.arange(len(distinct), dtype=np.float64)
    if len(distinct) > MAX_CATEGORY + 1:
        frequent = np.sort(np.argsort(-counts, kind="stable")[:MAX_CATEGORY])
        category[:] = MAX_CATEGORY
        category[frequent] = np.arange(MAX_CATEGORY)
    return int(category.max()) + 1, (distinct, category)


@njit(cache=True, nogil=True)
def raw_thresholds_into(feature, threshold_bin, n_bins, padded_edges, out):
    """BinMapper.raw_thresholds into out, from its n_bins_ and padded_edges (one compiled
    loop: a tree's numpy calls took 0.1 ms)."""
    for i in range(feature.shape[0]):
        split_feature = feature[i]
        split_bin = threshold_bin[i]
        if split_feature < 0 or split_bin < 0:
            out[i] = np.nan
        elif split_bin < n_bins[split_feature] - 1:
            out[i] = padded_edges[split_feature, min(split_bin, padded_edges.shape[1] - 1)]
        else:
            out[i] = np.inf


@njit(cache=True, parallel=True)
def _bin_rows(X, edges, categorical, codes):
    """codes[i, j] = #{edges of j < X[i, j]} (numpy's searchsorted "left"), MISSING_BIN for
    NaN; rows in parallel. edges[j] is padded with +inf to MAX_BINS entries, so the search
    takes 8 fixed halvings: low grows by 128, 64, ..., 1 while edges[j, low + step - 1] < x.
    No branch depends on the data, and the searches of a row overlap. Then the columns listed
    in `categorical` get their value as the code, a category 0..MAX_CATEGORY (raw_categories),
    else MISSING_BIN (NaN, unseen): in the same pass, as numpy column by column took 4 ms of
    a 3,000-row table's 40 categorical columns (a test of the column's kind in the search
    loop made a 100,000 x 500 transform 1.2x slower)."""
    for i in prange(X.shape[0]):
        for j in range(X.shape[1]):
            x = X[i, j]
            low = 0
            step = (MAX_BINS + 1) >> 1
            while step > 0:
                low += step if edges[j, low + step - 1] < x else 0
                step >>= 1
            codes[i, j] = MISSING_BIN if np.isnan(x) else low
        for j in categorical:
            x = X[i, j]
            known = (x >= 0.0) & (x <= MAX_CATEGORY) & (x == np.floor(x))
            codes[i, j] = np.uint8(x) if known else MISSING_BIN
