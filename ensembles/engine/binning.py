"""Quantile binning of raw features into uint8 codes, with one bin reserved for missing values.

A feature with edges e_0 < e_1 < ... < e_{m-2} has m bins: code b holds the values x with
e_{b-1} < x <= e_b, so "x <= e_b" and "code <= b" are the same test. NaN gets MISSING_BIN.

A categorical feature's values are its categories, whole numbers 0..MAX_CATEGORY, and its code
is the value itself (n_bins: the largest category seen + 1). At fit another value is an error;
later (prediction, validation rows) it is an unknown category and gets MISSING_BIN.
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


def fit_bin_edges(column: np.ndarray, max_bins: int = MAX_BINS) -> np.ndarray:
    """Upper bin edges of one feature, ignoring NaN.

    With at most `max_bins` distinct values the edges are the midpoints between consecutive
    distinct values, so binning loses nothing; otherwise they are `max_bins - 1` quantiles.
    """
    return _edges_and_upper_values(_sorted_values(np.array(column, dtype=np.float64)),
                                   max_bins)[0]


def _sorted_values(values: np.ndarray) -> np.ndarray:
    """The non-missing values, sorted in place: their leading part (numpy sorts NaN last, and
    searchsorted finds the first NaN)."""
    values.sort()
    return values[:np.searchsorted(values, np.nan)]


def _edges_and_upper_values(values: np.ndarray, max_bins: int):
    """fit_bin_edges of sorted non-missing values, and the largest value of each bin (NaN for
    an empty bin)."""
    distinct = _first_distinct(values, max_bins + 1)
    if len(distinct) <= max_bins:
        edges = (distinct[:-1] + distinct[1:]) / 2.0
    else:
        quantiles = np.linspace(0.0, 1.0, max_bins + 1)[1:-1]
        edges = np.unique(midpoint_quantiles(values, quantiles))
        edges = edges[edges < values[-1]]
    upper_values = np.full(N_BIN_SLOTS, np.nan)
    if len(values):
        last_in_bin = np.searchsorted(values, edges, side="right") - 1
        largest = np.append(values[np.maximum(last_in_bin, 0)], values[-1])
        lower = np.concatenate(([-np.inf], edges))
        upper = np.append(edges, np.inf)
        in_bin = (largest > lower) & (largest <= upper)
        upper_values[:len(largest)] = np.where(in_bin, largest, np.nan)
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


def midpoint_quantiles(sorted_values: np.ndarray, quantiles: np.ndarray) -> np.ndarray:
    """np.quantile(sorted_values, quantiles, method="midpoint") of values already sorted,
    without numpy's partition: at position i = (n - 1) q, v[i] when i is whole, else
    v[j + 1] - (v[j + 1] - v[j]) / 2 with j = floor(i) (numpy's interpolation, bit for bit)."""
    position = (len(sorted_values) - 1) * quantiles
    below = np.floor(position).astype(np.intp)
    above = np.minimum(below + 1, len(sorted_values) - 1)
    low = sorted_values[below]
    high = sorted_values[above]
    return np.where(below == np.ceil(position), low, high - (high - low) * 0.5)


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
        # a buffer per thread, allocated here: what a thread allocates stays in its own malloc
        # arena after the fit (two threads' temporaries of 200k rows kept 13 MB)
        buffers = np.empty((n_threads, len(rows)))

        def fit_features(thread: int) -> list:
            fitted = []
            for j in numerical[thread::n_threads]:
                _gather_column(X, rows, j, buffers[thread])
                fitted.append(_edges_and_upper_values(_sorted_values(buffers[thread]),
                                                      self.max_bins))
            return fitted

        with ThreadPoolExecutor(n_threads) as pool:
            groups = list(pool.map(fit_features, range(n_threads)))
        fitted = [groups[k % n_threads][k // n_threads] for k in range(len(numerical))]
        of_numerical = iter(fitted)
        fitted = [(np.empty(0), np.full(N_BIN_SLOTS, np.nan)) if is_categorical
                  else next(of_numerical) for is_categorical in self.categorical_]
        self.bin_edges_ = [edges for edges, _ in fitted]
        self.n_bins_ = np.array([len(e) + 1 for e in self.bin_edges_], dtype=np.int64)
        for j in np.flatnonzero(self.categorical_):
            self.n_bins_[j] = _category_count(X[:, j], j)
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
        _bin_rows(X, self._padded_edges, codes)
        for j in np.flatnonzero(self.categorical_):
            column = X[:, j]
            known = (column >= 0) & (column <= MAX_CATEGORY) & (column == np.floor(column))
            codes[:, j] = np.where(known, column, MISSING_BIN)
        return codes

    def fit_transform(self, X: np.ndarray) -> np.ndarray:
        return self.fit(X).transform(X)

    def threshold_value(self, feature: int, threshold_bin: int) -> float:
        """The raw threshold of a split "code <= threshold_bin": the bin's upper edge."""
        return float(self.bin_edges_[feature][threshold_bin])

    def raw_thresholds(self, feature: np.ndarray, threshold_bin: np.ndarray) -> np.ndarray:
        """threshold_value for every node of a tree; NaN at leaves (feature < 0) and at splits
        on a set of categories (threshold_bin < 0), +inf for a split on the last bin (every
        value left, only missing values right)."""
        thresholds = np.full(feature.shape, np.nan)
        internal = (feature >= 0) & (threshold_bin >= 0)
        split_feature = feature[internal]
        split_bin = np.minimum(threshold_bin[internal], self._padded_edges.shape[1] - 1)
        thresholds[internal] = np.where(
            threshold_bin[internal] < self.n_bins_[split_feature] - 1,
            self._padded_edges[split_feature, split_bin], np.inf)
        return thresholds


def _category_count(column: np.ndarray, feature: int) -> int:
    """n_bins of a categorical feature: its largest category + 1 (1 when every value is NaN);
    a value that is not a category 0..MAX_CATEGORY is refused, naming the feature."""
    values = column[~np.isnan(column)]
    bad = values[(values < 0) | (values > MAX_CATEGORY) | (values != np.floor(values))]
    if len(bad):
        raise ValueError(
            f"categorical feature {feature} has value {bad[0]!r}: categories must be whole "
            f"numbers 0..{MAX_CATEGORY} (at most {MAX_CATEGORY + 1} categories per feature); "
            "group rare categories or encode the feature ordinally")
    return int(values.max()) + 1 if len(values) else 1


@njit(cache=True, parallel=True)
def _bin_rows(X, edges, codes):
    """codes[i, j] = #{edges of j < X[i, j]} (numpy's searchsorted "left"), MISSING_BIN for
    NaN; rows in parallel. edges[j] is padded with +inf to MAX_BINS entries, so the search
    takes 8 fixed halvings: low grows by 128, 64, ..., 1 while edges[j, low + step - 1] < x.
    No branch depends on the data, and the searches of a row overlap."""
    for i in prange(X.shape[0]):
        for j in range(X.shape[1]):
            x = X[i, j]
            low = 0
            step = (MAX_BINS + 1) >> 1
            while step > 0:
                low += step if edges[j, low + step - 1] < x else 0
                step >>= 1
            codes[i, j] = MISSING_BIN if np.isnan(x) else low
