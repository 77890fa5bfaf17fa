"""Datasets: what a job reads, by name, from scikit-learn, a generator, OpenML or one's own files.

    datasets.py      the registry of loaders (dataset.name -> X, y), and what a run says of its data
    table_files.py   a researcher's own CSV or Parquet table, read as a clean frame
    openml.py        an OpenML dataset as OpenML serves it (scikit-learn's fetch_openml)
    suite_cache.py   the offline cache of benchmark suites (Parquet, checksummed)
    fetch.py         `python -m experiments.data fetch|verify SUITE` (make data): fill or check it
"""
