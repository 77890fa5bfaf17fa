"""The order `make test` hands modules to its workers (pytest-xdist, one module per worker at a
time): the modules with the most slow tests first, so that the short ones fill in after them
and no worker idles at the end while the other runs a long module (longest first)."""

from collections import Counter

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    slow_tests = Counter(item.path for item in items if item.get_closest_marker("slow"))
    items.sort(key=lambda item: -slow_tests[item.path])  # stable: each module keeps its order
