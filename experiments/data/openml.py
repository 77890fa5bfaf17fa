"""An OpenML dataset as a pandas frame, as OpenML serves it, read by scikit-learn's fetch_openml.

Every attribute but the row id and the ignored ones (dropped as fetch_openml drops them); nominal
attributes as pandas categories of the values OpenML lists, numeric ones as numbers, `string`
and `date` attributes as text (pandas `str`; dates are not parsed). Two limits of scikit-learn
1.9.1 are met here: its pandas ARFF parser fails under pandas 3 on nominal attributes whose
values are numbers or booleans (`TypeError: expected string or bytes-like object, got 'int'`,
upstream scikit-learn issue 34892), read then by its liac-arff parser; and sparse ARFF cannot be
read as a frame at all, refused in one line before its data is downloaded.
"""

import re
from pathlib import Path

import pandas as pd
from sklearn import datasets
from sklearn.datasets._openml import _get_data_description_by_id, _get_data_features
from sklearn.utils import Bunch

TEXT_TYPES = ("string", "date")  # OpenML feature data_types read as text
NOMINAL_VALUE_ERROR = re.compile(r"expected string or bytes-like object, got '(int|bool|float)'")


def fetch_frame(data_id: int, data_home: str | Path) -> tuple[pd.DataFrame, dict]:
    """OpenML dataset `data_id` as (frame of every attribute, OpenML's description: name,
    version, default_target_attribute, ...), downloaded once into the cache `data_home`.

    Description and features come first (scikit-learn's own cached requests, private to
    sklearn.datasets._openml), so a sparse dataset is refused before its data is downloaded and
    the text attributes are known to the pandas parser. Errors: OSError when the dataset is
    neither cached nor downloadable, ValueError for a sparse dataset, both one line naming it."""
    home = str(data_home)
    try:
        description = _get_data_description_by_id(data_id, home)
        features = _get_data_features(data_id, home)
        if description["format"].lower() == "sparse_arff":
            raise ValueError(f"OpenML dataset {data_id} ({description['name']}) is sparse ARFF, "
                             "which the lab cannot read as a table")  # fmt: skip
        bunch = _fetch(data_id, home, features)
    except OSError as error:  # URLError, TimeoutError: offline and not in the cache
        raise OSError(f"OpenML dataset {data_id} is not in the cache {home} and cannot be "
                      f"downloaded: {error}") from error  # fmt: skip
    text = [feature["name"] for feature in features
            if feature["data_type"] in TEXT_TYPES and feature["name"] in bunch.frame]  # fmt: skip
    return bunch.frame.astype(dict.fromkeys(text, "str")), bunch.details


def _fetch(data_id: int, home: str, features: list[dict]) -> Bunch:
    """fetch_openml with its pandas parser, text attributes kept as their text (a converter per
    column, so a column of numbers stays text); its liac-arff parser exactly when the pandas
    parser fails on a nominal attribute's numeric or boolean values."""
    text = {index: str for index, feature in enumerate(features)
            if feature["data_type"] in TEXT_TYPES}  # fmt: skip
    try:
        return datasets.fetch_openml(data_id=data_id, data_home=home, as_frame=True,
                                     target_column=None, parser="pandas",
                                     read_csv_kwargs={"converters": text})  # fmt: skip
    except TypeError as error:
        has_nominal = any(feature["data_type"] == "nominal" for feature in features)
        if not (has_nominal and NOMINAL_VALUE_ERROR.search(str(error))):
            raise
    return datasets.fetch_openml(data_id=data_id, data_home=home, as_frame=True,
                                 target_column=None, parser="liac-arff")  # fmt: skip
