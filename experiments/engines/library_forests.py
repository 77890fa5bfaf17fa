"""What XGBoost's and LightGBM's random-forest modes share: rows subsampled without
replacement in place of a bootstrap, and the forest parameters they do not have."""

import numpy as np

from experiments.configs import Criterion, Task
from experiments.engines.spec import SkippedJob, Spec, check_bootstrap_size


def row_fraction(method) -> float:
    """The share of rows the library's tree sees without replacement in place of a bootstrap of
    m = max_samples * n draws: its expected share of distinct rows, 1 - (1 - 1/n)^m ~ 1 -
    exp(-max_samples) (0.632 for n draws); 1 without a bootstrap."""
    if not method.bootstrap:
        return 1.0
    return float(1.0 - np.exp(-(1.0 if method.max_samples is None else method.max_samples)))


def check_library_forest(spec: Spec, engine: str) -> None:
    """Skip the random-forest parameters that XGBoost's and LightGBM's rf modes do not have;
    refuse max_samples without a bootstrap as scikit-learn's forests do."""
    method = spec.method
    check_bootstrap_size(method)
    if method.oob_score:
        raise SkippedJob(f"{engine} has no out-of-bag score (oob_score=true)")
    if method.min_samples_split != 2:
        raise SkippedJob(f"{engine} has no min_samples_split (got {method.min_samples_split})")
    if not spec.regression and method.criterion is not Criterion.gini:
        raise SkippedJob(f"{engine} splits on gradient gain, not {method.criterion.value}")


def library_forest_approximation(spec: Spec, engine: str) -> str | None:
    """The tag of a forest in a library's rf mode: everything it changes against Breiman's
    forest of the in-house and scikit-learn engines, joined by "; "."""
    changes = []
    if spec.method.bootstrap:
        changes.append(f"{engine} subsamples {row_fraction(spec.method):.1%} of the rows "
                       "without replacement, not a bootstrap")
    if not spec.regression:
        changes.append(
            f"{engine}'s leaves are one Newton step of the logistic loss from the base score p0 "
            "(a pure leaf scores 1/p0 or -1/(1-p0) in log-odds), averaged over the trees, not "
            "class shares voted: on imbalanced classes it leans to the minority class")
    if spec.task is Task.multiclass:
        changes.append(f"{engine} grows one tree per class on softmax gradients, not one tree "
                       "of K classes")
    return "; ".join(changes) or None
