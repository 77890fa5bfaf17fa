"""Hyper-parameter tuning inside each job (config group `tune`, spaces in conf/search_space/).

    space.py      a method's search space as Optuna distributions; its checks; probe values
    selection.py  the inner metric a study minimizes and the rule that chooses its best trial
    search.py     the Tuner: nested trials on one outer split, the best configuration to refit
    choices.py    categorical choices the job's estimator refuses, found before any run
"""
