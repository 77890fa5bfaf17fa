import numpy as np
import pytest

from ensembles.class_choice import (
    PROBABILITY_TIE,
    class_labels,
    most_probable,
    most_probable_of_logits,
    two_class_proba,
)


def test_most_probable_is_the_first_class_within_the_tie_of_the_row_max():
    """most_probable's numba pass against numpy's definition: ties, near ties (within
    PROBABILITY_TIE), NaN in any column (class 0, as numpy's max and argmax give)."""
    rng = np.random.default_rng(0)
    for n_classes in (2, 3, 8):
        proba = rng.random((5000, n_classes))
        proba[::7, 1] = proba[::7, 0]
        proba[::13, -1] = proba[::13].max(axis=1) + PROBABILITY_TIE / 2
        proba[::11, 0] = np.nan
        proba[::19, -1] = np.nan
        expected = np.argmax(proba >= proba.max(axis=1, keepdims=True) - PROBABILITY_TIE, axis=1)
        np.testing.assert_array_equal(most_probable(proba), expected)
        np.testing.assert_array_equal(most_probable(proba[:, ::-1]),
                                      np.argmax(proba[:, ::-1] >= proba.max(axis=1, keepdims=True)
                                                - PROBABILITY_TIE, axis=1))


def test_the_class_of_two_class_logits_is_that_of_their_probabilities():
    """most_probable_of_logits, which makes no probabilities (and may write over the logits),
    against most_probable of two_class_proba: near ties (|F| about 1e-12), saturation,
    infinities and NaN."""
    rng = np.random.default_rng(0)
    logits = np.concatenate([rng.normal(scale=5.0, size=20000),
                             rng.normal(scale=1e-11, size=20000), [0.0, -0.0],
                             [-800.0, 800.0, 40.0, -40.0, np.inf, -np.inf, np.nan]])
    expected = most_probable(two_class_proba(logits))
    np.testing.assert_array_equal(most_probable_of_logits(logits), expected)
    overwritten = logits.copy()
    np.testing.assert_array_equal(most_probable_of_logits(overwritten, overwrite=True), expected)


@pytest.mark.parametrize("classes", [np.arange(3), np.array([0, 2, 5]), np.array(["a", "b", "c"]),
                                     np.arange(3, dtype=np.int32)])
def test_class_labels_are_the_classes_at_the_index(classes):
    """class_labels returns classes[index], the index itself only when that is the same."""
    index = np.random.default_rng(0).integers(0, 3, size=50).astype(np.intp)
    labels = class_labels(classes, index)
    assert labels.dtype == classes.dtype
    np.testing.assert_array_equal(labels, classes[index])
