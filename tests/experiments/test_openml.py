"""OpenML as it serves its datasets, offline: scikit-learn's real fetch_openml code path fed with
the OpenML responses that scikit-learn records for its own tests (description, features,
qualities and ARFF file of each dataset, some truncated), served by a replaced `urlopen` as
scikit-learn's tests do. The expected values come from OpenML's own metadata (features' types,
nominal values and missing counts; qualities' class sizes), read by the test from the files."""

import email.message
import gzip
import json
from importlib import resources
from io import BytesIO
from pathlib import Path
from urllib.error import URLError
from urllib.response import addinfourl

import numpy as np
import pandas as pd
import pytest
import sklearn.datasets._openml as sklearn_openml
from sklearn.datasets import fetch_openml

from experiments.data import fetch
from experiments.data.datasets import load_dataset
from experiments.data.openml import fetch_frame
from experiments.data.suite_cache import read_dataset

RECORDED = Path(str(resources.files("sklearn.datasets.tests.data.openml")))  # as conftest's

def recorded_json(data_id: int, kind: str) -> dict:
    with gzip.open(RECORDED / f"id_{data_id}" / f"api-v1-{kind}-{data_id}.json.gz") as file:
        return json.load(file)


def features(data_id: int) -> list[dict]:
    """OpenML's feature metadata of the dataset."""
    return recorded_json(data_id, "jdf")["data_features"]["feature"]


def qualities(data_id: int) -> dict[str, float]:
    return {quality["name"]: float(quality["value"])
            for quality in recorded_json(data_id, "jdq")["data_qualities"]["quality"]
            if quality["value"] is not None}  # fmt: skip


def kept(data_id: int) -> list[dict]:
    """The features a frame holds: all but the row id and the ignored ones."""
    return [feature for feature in features(data_id)
            if "true" not in (feature["is_ignore"], feature["is_row_identifier"])]  # fmt: skip


def test_the_pandas_parser_fails_on_titanics_nominal_numbers(recorded_openml, tmp_path):
    """The premise (scikit-learn issue 34892): scikit-learn 1.9.1's default parser cannot read
    Titanic under pandas 3. When this test fails, scikit-learn is fixed and the fallback of
    fetch_frame can go."""
    with pytest.raises(TypeError, match="expected string or bytes-like object, got 'int'"):
        fetch_openml(data_id=40945, data_home=str(tmp_path), as_frame=True, target_column=None)


@pytest.mark.parametrize("data_id", [40945, 40675, 62, 40589])  # nominal ints; booleans: 62, 40589
def test_nominal_numbers_and_booleans_are_read_as_the_categories_openml_lists(
        recorded_openml, tmp_path, data_id):
    frame, details = fetch_frame(data_id, tmp_path)
    assert list(frame.columns) == [feature["name"] for feature in kept(data_id)]
    for feature in kept(data_id):
        column = frame[feature["name"]]
        if feature["data_type"] == "nominal":
            assert isinstance(column.dtype, pd.CategoricalDtype), feature["name"]
            listed = feature.get("nominal_value")
            if listed is not None:
                assert set(column.cat.categories) <= set(map(str, listed)), feature["name"]
        else:
            assert pd.api.types.is_numeric_dtype(column) == (feature["data_type"] == "numeric")
    assert int(details["id"]) == data_id


def test_titanic_is_read_whole_with_its_survivors(recorded_openml, tmp_path):
    """Titanic (OpenML 40945): 1309 passengers, 500 survived (OpenML's qualities:
    NumberOfInstances, MinorityClassSize), `survived` with the values 0 and 1 as text."""
    frame, details = fetch_frame(40945, tmp_path)
    stated = qualities(40945)
    assert len(frame) == stated["NumberOfInstances"] == 1309
    assert frame["survived"].value_counts().to_dict() == {"0": stated["MajorityClassSize"],
                                                          "1": stated["MinorityClassSize"]}
    assert (details["name"], details["version"], details["default_target_attribute"]) == (
        "Titanic", "1", "survived")


@pytest.mark.parametrize(("data_id", "dropped"), [
    (40966, {"MouseID", "Genotype", "Treatment", "Behavior"}),  # row id, 3 ignored
    (1119, {"ID"}),  # row id
    (62, {"animal"}),  # ignored
])
def test_the_row_id_and_ignored_attributes_are_dropped(recorded_openml, tmp_path, data_id,
                                                       dropped):
    frame, _ = fetch_frame(data_id, tmp_path)
    every = [feature["name"] for feature in features(data_id)]
    assert list(frame.columns) == [name for name in every if name not in dropped]


@pytest.mark.parametrize("data_id", [40945, 42585])  # recorded whole: every row of OpenML's
def test_missing_values_are_where_openml_counts_them(recorded_openml, tmp_path, data_id):
    """Per column, as many missing values as OpenML's metadata states (numeric, nominal and
    string columns: Titanic's age 263, embarked 2, cabin 1014; penguins' sex 10)."""
    frame, _ = fetch_frame(data_id, tmp_path)
    expected = {feature["name"]: int(feature["number_of_missing_values"])
                for feature in kept(data_id)}  # fmt: skip
    assert frame.isna().sum().to_dict() == expected
    assert sum(expected.values()) == qualities(data_id)["NumberOfMissingValues"]


@pytest.mark.parametrize("data_id", [40945, 42074])  # liac-arff and pandas parser
def test_string_columns_stay_text(recorded_openml, tmp_path, data_id):
    """OpenML's string attributes are text (Titanic's ticket 24160 and boat 2 too), never
    categories or numbers."""
    frame, _ = fetch_frame(data_id, tmp_path)
    strings = [feature["name"] for feature in kept(data_id) if feature["data_type"] == "string"]
    assert strings and all(frame[name].dtype == "str" for name in strings)
    assert not any(isinstance(frame[name].dtype, pd.CategoricalDtype) for name in strings)
    if data_id == 40945:
        assert (frame.loc[0, "ticket"], frame.loc[0, "boat"]) == ("24160", "2")


def served_headers() -> email.message.Message:
    headers = email.message.Message()
    headers["Content-Encoding"] = "gzip"
    return headers


def test_a_string_column_of_numbers_stays_text(recorded_openml, monkeypatch, tmp_path):
    """wine_reviews (OpenML 42074, read by the pandas parser) with its `points` (whole numbers)
    restated as a string attribute in the features response, as OpenML states a zip code or an
    ID: text ('96'), not the number the pandas parser would infer."""
    stated = recorded_json(42074, "jdf")
    for feature in stated["data_features"]["feature"]:
        if feature["name"] == "points":
            feature["data_type"] = "string"
    restated = tmp_path / "restated" / "api-v1-jdf-42074.json.gz"
    restated.parent.mkdir()
    restated.write_bytes(gzip.compress(json.dumps(stated).encode()))
    served = sklearn_openml.urlopen  # the recorded responses (conftest's recorded_openml)

    def urlopen(request, *args, **kwargs):
        if request.get_full_url().endswith("/features/42074"):
            return addinfourl(BytesIO(restated.read_bytes()), served_headers(), "", 200)
        return served(request, *args, **kwargs)

    monkeypatch.setattr(sklearn_openml, "urlopen", urlopen)
    frame, _ = fetch_frame(42074, tmp_path / "home")
    assert frame["points"].dtype == "str" and frame.loc[0, "points"] == "96"


def test_a_sparse_dataset_is_refused_in_one_line_before_its_data_is_downloaded(
        recorded_openml, tmp_path):
    with pytest.raises(ValueError) as error:
        fetch_frame(292, tmp_path)
    assert str(error.value) == (
        "OpenML dataset 292 (Australian) is sparse ARFF, which the lab cannot read as a table")
    assert not [url for url in recorded_openml if "/data/v1/download/" in url]


def test_offline_a_cached_dataset_is_read_and_an_uncached_one_named(recorded_openml,
                                                                     monkeypatch, tmp_path):
    first, _ = fetch_frame(42585, tmp_path)
    monkeypatch.setattr(sklearn_openml, "urlopen", recorded_openml_offline)
    monkeypatch.setattr(sklearn_openml.time, "sleep", lambda seconds: None)  # its 3 retries
    again, _ = fetch_frame(42585, tmp_path)
    pd.testing.assert_frame_equal(again, first)
    with pytest.raises(OSError) as error:
        fetch_frame(40945, tmp_path)
    assert str(error.value) == (
        f"OpenML dataset 40945 is not in the cache {tmp_path} and cannot be downloaded: "
        "<urlopen error [Errno -2] Name or service not known>")


def recorded_openml_offline(request, *args, **kwargs):
    raise URLError(OSError(-2, "Name or service not known"))


SUITE_YAML = """name: recorded
datasets:
  titanic: {data_id: 40945, target: survived, task: binary}
  penguins: {data_id: 42585, target: null, task: multiclass}
  zoo: {data_id: 62, target: type, task: multiclass}
  australian: {data_id: 292, target: A15, task: binary}
"""


def test_make_data_fetches_what_it_can_and_names_the_dataset_it_cannot(recorded_openml,
                                                                       tmp_path, capsys):
    suite = tmp_path / "recorded.yaml"
    suite.write_text(SUITE_YAML)
    cache = str(tmp_path / "cache")
    assert fetch.main(["fetch", str(suite), "--cache", cache]) == 1
    captured = capsys.readouterr()
    assert [line for line in captured.err.splitlines() if line.startswith("error:")] == [
        "error: australian: OpenML dataset 292 (Australian) is sparse ARFF, which the lab "
        "cannot read as a table"]
    assert captured.out.strip() == f"recorded: 3 of 4 datasets in {cache}"
    for name, data_id in (("titanic", 40945), ("penguins", 42585), ("zoo", 62)):
        frame, metadata = read_dataset("recorded", name, data_id, cache)
        stated = qualities(data_id)
        assert len(frame) == metadata.rows == stated["NumberOfInstances"]
        counts = sorted(metadata.class_counts.values())
        assert (counts[0], counts[-1]) == (stated["MinorityClassSize"],
                                           stated["MajorityClassSize"])
    titanic, metadata = read_dataset("recorded", "titanic", 40945, cache)
    assert (metadata.numeric_features, metadata.categorical_features) == (6, 7)  # 5 strings
    assert isinstance(titanic["sex"].dtype, pd.CategoricalDtype)
    assert pd.api.types.is_string_dtype(titanic["cabin"]) and titanic["cabin"].isna().sum() == 1014
    assert read_dataset("recorded", "penguins", 42585, cache)[1].target == "species"  # default


def test_a_job_reads_titanic_as_openml_serves_it(recorded_openml, compose_job, tmp_path):
    """dataset=openml through the job's loader: Titanic's 1309 rows, its 13 features (the text
    ones as codes), named by its id."""
    cfg = compose_job("dataset=openml", "dataset.data_id=40945", "dataset.task=binary",
                      f"dataset.data_home={tmp_path}")
    X, y = load_dataset(cfg.dataset)
    assert cfg.dataset.name == "openml_40945"
    assert X.shape == (1309, 13) and np.bincount(y).tolist() == [809, 500]
