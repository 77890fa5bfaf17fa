"""The documentation site (make docs): it builds with warnings as errors, runs the examples of
its pages and of the estimators' docstrings, documents every public estimator's parameters
(numpydoc), and renders the performance page from a bench.csv that experiments.bench wrote."""

import argparse
import importlib.util
import inspect

import pandas as pd
import pytest
from numpydoc.docscrape import ClassDoc, FunctionDoc
from sphinx.cmd.build import build_main

import ensembles
import reports
from ensembles.losses import make_loss
from experiments.bench import summarize, write_results
from experiments.data.datasets import load_dataset
from experiments.engines import build_estimator
from experiments.paths import PROJECT_ROOT
from experiments.run import run_job

DOCS = PROJECT_ROOT / "docs"
# myst-parser 5.2 reads an attribute Sphinx 9 deprecates (not a warning of the build)
pytestmark = pytest.mark.filterwarnings("ignore:.*MystReferenceResolver.app' is deprecated")
SECTIONS = ("Parameters", "Attributes", "References", "Examples")
# the public functions, by the path the API page documents them under
FUNCTIONS = {"reports.build_report": reports.build_report, "experiments.run.run_job": run_job,
             "experiments.data.datasets.load_dataset": load_dataset,
             "experiments.engines.build_estimator": build_estimator,
             "ensembles.losses.make_loss": make_loss}


@pytest.fixture(scope="module")
def bench_csv(tmp_path_factory):
    """A bench.csv as `make bench` writes it (summarize, write_results), from made-up runs of
    one case: the in-house engine 2 s, XGBoost 1 s, LightGBM 4 s."""
    out = tmp_path_factory.mktemp("bench")
    runs = pd.DataFrame({"case": "gbt_depthwise", "engine": ["inhouse", "xgboost", "lightgbm"],
                         "fit_seconds": [2.0, 1.0, 4.0], "predict_seconds": [0.1, 0.1, 0.1],
                         "score": [0.9, 0.9, 0.9]})
    args = argparse.Namespace(repeats=1, threads=2, features=28, rows=1000, mid_rows=1000,
                              small_rows=1000, sweep_jobs=1, trials=20, fit_seconds=1.0)
    write_results(summarize(runs), out, args)
    return out / "bench.csv"


@pytest.fixture(scope="module")
def site(tmp_path_factory, bench_csv):
    """(sphinx options, doctree dir, html dir) of one html build, warnings as errors; the
    doctest build reuses its doctrees."""
    build = tmp_path_factory.mktemp("docs")
    options = ["-q", "-W", "--keep-going", "-D", f"bench_results={bench_csv}",
               "-d", str(build / "doctrees")]
    assert build_main([*options, "-b", "html", str(DOCS), str(build / "html")]) == 0
    return options, build


def test_site_builds_without_warnings_and_documents_every_estimator_and_function(site):
    _, build = site
    api = (build / "html" / "api.html").read_text()
    documented = [*(f"ensembles.{name}" for name in ensembles.__all__), *FUNCTIONS]
    assert [name for name in documented if f'id="{name}"' not in api] == []


def test_examples_of_pages_and_docstrings_run(site):
    options, build = site
    assert build_main([*options, "-b", "doctest", str(DOCS), str(build / "doctest")]) == 0
    report = (build / "doctest" / "output.txt").read_text()
    assert "0 failed" in report and "api" in report  # the docstrings' Examples ran


def test_performance_page_shows_the_bench_results(site):
    _, build = site
    page = (build / "html" / "performance.html").read_text()
    assert "gbt_depthwise" in page and "CPU:" in page
    assert ">2<" in page  # ours / the fastest reference: 2 s / 1 s


def test_performance_page_says_how_to_produce_missing_results(tmp_path):
    spec = importlib.util.spec_from_file_location("docs_conf", DOCS / "conf.py")
    conf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conf)
    assert "make bench" in conf.bench_tables(tmp_path / "bench.csv")


@pytest.mark.parametrize("name", ensembles.__all__)
def test_estimator_docstring_has_numpydoc_sections_and_every_parameter(name):
    estimator = getattr(ensembles, name)
    doc = ClassDoc(estimator, config={"show_class_members": False})
    assert [section for section in SECTIONS if not doc[section]] == []
    documented = [part for entry in doc["Parameters"] for part in entry.name.split(", ")]
    assert documented == list(inspect.signature(estimator).parameters)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_function_docstring_has_numpydoc_sections_and_every_parameter(name):
    function = FUNCTIONS[name]
    doc = FunctionDoc(function)
    assert doc["Parameters"] and (doc["Returns"] or doc["Yields"])
    documented = [entry.name.removeprefix("**") for entry in doc["Parameters"]]
    assert documented == list(inspect.signature(function).parameters)
