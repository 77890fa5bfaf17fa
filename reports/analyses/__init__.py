"""Tables and figures of the per-job analyses (experiments/analyses/), one module each.

    per_dataset.py    the shared table: per dataset, rows method / engine (/ encoding),
                      mean ± std over seeds
    bias_variance.py  bv_* tables
    diversity.py      div_* tables
    margins.py        cumulative margin distributions of AdaBoost and LogitBoost (margins.csv)
"""
