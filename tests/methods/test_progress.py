"""verbose=1 draws a progress bar over rounds or trees on a terminal, nothing elsewhere, and
never changes the model."""

import io
import sys

import numpy as np
import pytest
from sklearn.datasets import make_classification

import ensembles


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


ESTIMATORS = [
    (ensembles.GradientBoostingClassifier(n_estimators=7), "0/7", "round"),
    (ensembles.AdaBoostClassifier(n_estimators=7), "0/7", "round"),
    (ensembles.RandomForestClassifier(n_estimators=7), "0/7", "tree"),
]


@pytest.mark.parametrize(("estimator", "count", "unit"), ESTIMATORS)
def test_a_bar_counts_the_rounds_on_a_terminal_only(estimator, count, unit, monkeypatch):
    X, y = make_classification(n_samples=300, random_state=0)
    quiet = estimator.set_params(random_state=0).fit(X, y).predict_proba(X)

    monkeypatch.setattr("sys.stderr", Terminal())
    shown = estimator.set_params(verbose=1).fit(X, y).predict_proba(X)
    assert count in sys.stderr.getvalue()  # the bar of 7 (tqdm redraws at most every 0.1 s)
    assert unit in sys.stderr.getvalue()

    monkeypatch.setattr("sys.stderr", io.StringIO())  # a pipe or a log file: no bar
    estimator.fit(X, y)
    assert sys.stderr.getvalue() == ""
    np.testing.assert_array_equal(shown, quiet)
