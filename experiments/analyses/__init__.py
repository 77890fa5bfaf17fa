"""Per-job analyses of the fitted models, apart from the job's infrastructure.

    findings.py       FittedSplit (what an analysis reads) and Findings (what it gives back)
    member_votes.py   the class each member of a classifier ensemble votes for (shared)
    diversity.py      div_*: diversity, strength and correlation on each split's test rows
    margins.py        margins.csv: AdaBoost's and LogitBoost's training margins, first split

Evaluation (experiments.evaluation.SPLIT_ANALYSES) calls every per-split analysis,
(model, FittedSplit) -> Findings, on each split; an analysis that does not apply to a model
returns empty Findings. The package imports nothing, so that the reports read an artifact's
name (findings.py) without loading the engine.
The bias-variance decomposition (eval.kind=bias_variance) is a protocol of its own, not a
per-split analysis: experiments/bias_variance.py, beside the evaluation it calls.
"""
