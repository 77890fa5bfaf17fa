"""What a per-split analysis reads (a FittedSplit) and gives back (Findings)."""

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

MARGINS_ARTIFACT = "margins.csv"  # the margins table of margins.py, read by the reports


@dataclass(frozen=True)
class FittedSplit:
    """The rows of one (train, test) split that a model was fitted and scored on; index 0 is
    the job's first split."""

    index: int
    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray


@dataclass
class Findings:
    """metrics: logged per split (split_<name>) and as their mean; tables: logged once as CSV
    artifacts named by their key."""

    metrics: dict[str, float] = field(default_factory=dict)
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
