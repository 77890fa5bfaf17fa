"""The Hydra app that runs a method on a dataset with an engine and logs the result to MLflow.

    run.py        one job, top to bottom (python -m experiments.run); configs.py its schema
    data/         what a job reads: datasets by name, one's own tables, OpenML, the suite cache
    engines/      a method config -> the estimator of an engine (in-house or a reference library)
    tuning/       hyper-parameter tuning inside a job
    evaluation.py splits, metrics, learning curves; bias_variance.py its own protocol
    analyses/     per-split analyses of the fitted models (diversity, margins)
    store/        the MLflow store, a run's bookkeeping, the team server

docs/layout.md maps every module.
"""
