"""Per-job analyses of the fitted models, apart from the job's infrastructure.

    findings.py       FittedSplit (what an analysis reads) and Findings (what it gives back)
    member_votes.py   the class each member of a classifier ensemble votes for (shared)
    diversity.py      div_*: diversity, strength and correlation on each split's test rows
    margins.py        margins.csv: AdaBoost's and LogitBoost's training margins, first split
    bias_variance.py  bv_*: the decomposition of eval.kind=bias_variance (its own protocol)

Evaluation calls every function of SPLIT_ANALYSES, (model, FittedSplit) -> Findings, on each
split; an analysis that does not apply to a model returns empty Findings.
"""

from experiments.analyses.diversity import diversity_findings
from experiments.analyses.findings import Findings, FittedSplit
from experiments.analyses.margins import margin_findings

SPLIT_ANALYSES = (diversity_findings, margin_findings)

__all__ = ["SPLIT_ANALYSES", "Findings", "FittedSplit"]
