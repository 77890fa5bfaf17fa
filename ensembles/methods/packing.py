"""An estimator's trees packed once for prediction (engine.tree.PackedEnsemble), kept while
its trees are the same."""

from ensembles.engine.tree import PackedEnsemble, Tree


def packed_trees(estimator, name: str, trees: list[Tree]) -> PackedEnsemble:
    """The PackedEnsemble of `trees`, kept on the estimator under `name` (a GBT keeps one per
    output) and packed again when its trees are other objects (a new fit)."""
    cache = estimator.__dict__.setdefault("_packed_trees", {})
    if name not in cache or not cache[name].packs(trees):
        cache[name] = PackedEnsemble.of(trees)
    return cache[name]
