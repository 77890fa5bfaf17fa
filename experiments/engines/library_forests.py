"""What XGBoost's and LightGBM's random-forest modes share: rows subsampled without
replacement in place of a bootstrap, and the forest parameters they do not have."""

import numpy as np

from experiments.configs import Criterion
from experiments.engines.spec import SkippedJob, Spec

BOOTSTRAP_FRACTION = 1.0 - np.exp(-1.0)  # expected share of distinct rows in a bootstrap, 0.632


def check_library_forest(spec: Spec, engine: str) -> None:
    """Skip the random-forest parameters that XGBoost's and LightGBM's rf modes do not have."""
    method = spec.method
    if method.oob_score:
        raise SkippedJob(f"{engine} has no out-of-bag score (oob_score=true)")
    if method.min_samples_split != 2:
        raise SkippedJob(f"{engine} has no min_samples_split (got {method.min_samples_split})")
    if not spec.regression and method.criterion is not Criterion.gini:
        raise SkippedJob(f"{engine} splits on gradient gain, not {method.criterion.value}")


def bagging_approximation(spec: Spec, engine: str) -> str | None:
    """The tag of a bootstrap forest in a library's rf mode, which subsamples rows instead."""
    if not spec.method.bootstrap:
        return None
    return f"{engine} subsamples 63.2% of the rows without replacement, not a bootstrap"
