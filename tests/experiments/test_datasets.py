"""Datasets by name: generated data follows data_seed only, labels are 0..K-1, loads are cached."""

import numpy as np
from sklearn.datasets import make_friedman1, make_hastie_10_2

from experiments.datasets import load_dataset


def test_generated_data_follows_data_seed_not_the_job_seed(compose_job):
    X, y = load_dataset(compose_job("dataset=friedman1", "seed=0").dataset)
    X_other_seed, _ = load_dataset(compose_job("dataset=friedman1", "seed=1").dataset)
    assert X_other_seed is X  # one load per process and config
    X_expected, y_expected = make_friedman1(
        n_samples=2000, n_features=10, noise=1.0, random_state=0
    )
    np.testing.assert_array_equal(X, X_expected)
    np.testing.assert_array_equal(y, y_expected)
    X_new, _ = load_dataset(compose_job("dataset=friedman1", "dataset.data_seed=1").dataset)
    assert not np.array_equal(X_new, X)


def test_class_labels_are_encoded_from_zero(compose_job):
    X, y = load_dataset(compose_job("dataset=hastie_10_2", "dataset.n_samples=300").dataset)
    _, y_book = make_hastie_10_2(n_samples=300, random_state=0)
    np.testing.assert_array_equal(y, (y_book == 1).astype(int))
    assert X.shape == (300, 10)
