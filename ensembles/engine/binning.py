"""Quantile binning of raw features into uint8 codes, with one bin reserved for missing values.

A feature with edges e_0 < e_1 < ... < e_{m-2} has m bins: code b holds the values x with
e_{b-1} < x <= e_b, so "x <= e_b" and "code <= b" are the same test. NaN gets MISSING_BIN.
"""

import numpy as np

MAX_BINS = 255
MISSING_BIN = 255
N_BIN_SLOTS = 256  # MAX_BINS value bins + the missing-value bin


def fit_bin_edges(column: np.ndarray, max_bins: int = MAX_BINS) -> np.ndarray:
    """Upper bin edges of one feature, ignoring NaN.

    With at most `max_bins` distinct values the edges are the midpoints between consecutive
    distinct values, so binning loses nothing; otherwise they are `max_bins - 1` quantiles.
    """
    values = column[~np.isnan(column)]
    distinct = np.unique(values)
    if len(distinct) <= max_bins:
        return (distinct[:-1] + distinct[1:]) / 2.0
    quantiles = np.linspace(0.0, 1.0, max_bins + 1)[1:-1]
    edges = np.unique(np.quantile(values, quantiles, method="midpoint"))
    return edges[edges < distinct[-1]]


class BinMapper:
    """Maps a float matrix to Fortran-ordered uint8 codes, one set of edges per feature."""

    def __init__(self, max_bins: int = MAX_BINS):
        if not 2 <= max_bins <= MAX_BINS:
            raise ValueError(f"max_bins must be in [2, {MAX_BINS}], got {max_bins}")
        self.max_bins = max_bins

    def fit(self, X: np.ndarray) -> "BinMapper":
        """Edges per feature, and bin_upper_values_[j, b]: the largest training value of
        feature j in bin b (NaN for an empty bin), the raw scale random thresholds are drawn on."""
        self.bin_edges_ = [fit_bin_edges(X[:, j], self.max_bins) for j in range(X.shape[1])]
        self.n_bins_ = np.array([len(e) + 1 for e in self.bin_edges_], dtype=np.int32)
        self.bin_upper_values_ = np.full((X.shape[1], N_BIN_SLOTS), np.nan)
        for j, edges in enumerate(self.bin_edges_):
            values = X[~np.isnan(X[:, j]), j]
            codes = np.searchsorted(edges, values, side="left")
            np.fmax.at(self.bin_upper_values_[j], codes, values)
        return self

    def transform(self, X: np.ndarray) -> np.ndarray:
        codes = np.empty(X.shape, dtype=np.uint8, order="F")
        for j, edges in enumerate(self.bin_edges_):
            column = X[:, j]
            codes[:, j] = np.searchsorted(edges, column, side="left")
            codes[np.isnan(column), j] = MISSING_BIN
        return codes

    def fit_transform(self, X: np.ndarray) -> np.ndarray:
        return self.fit(X).transform(X)

    def threshold_value(self, feature: int, threshold_bin: int) -> float:
        """The raw threshold of a split "code <= threshold_bin": the bin's upper edge."""
        return float(self.bin_edges_[feature][threshold_bin])

    def raw_thresholds(self, feature: np.ndarray, threshold_bin: np.ndarray) -> np.ndarray:
        """threshold_value for every node of a tree; NaN at leaves (feature < 0), +inf for a
        split on the last bin (every value left, only missing values right)."""
        thresholds = np.full(feature.shape, np.nan)
        for node in np.flatnonzero(feature >= 0):
            edges = self.bin_edges_[feature[node]]
            b = threshold_bin[node]
            thresholds[node] = edges[b] if b < len(edges) else np.inf
        return thresholds
