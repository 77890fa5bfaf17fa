"""Progress bars over boosting rounds and trees (tqdm): shown when the estimator's `verbose` is
set and stderr is a terminal, never in a log file or a pipe."""

from collections.abc import Iterable, Iterator

from tqdm.auto import tqdm


def progress(items: Iterable, total: int, verbose: int, unit: str) -> Iterator:
    """The items, counted on a bar of `total` `unit`s that disappears when done (or on break)."""
    with tqdm(items, total=total, unit=unit, leave=False,
              disable=None if verbose else True) as bar:  # None: off when not a terminal
        yield from bar
