"""Hyper-parameter tuning inside each job (config group `tune`, spaces in conf/search_space/).

    space.py   a method's search space as Optuna distributions; its checks; probe values
    search.py  the Tuner: nested trials on one outer split, the best configuration to refit
"""
