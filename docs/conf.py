"""Sphinx configuration of the documentation site (make docs; tests/test_docs.py builds it).

Sphinx with numpydoc and the pydata theme, the scientific Python convention (scikit-learn,
numpy, pandas); MyST reads the markdown pages as they are. The performance page's tables are
written from `make bench`'s results file (`bench_results`, default reports/out/bench.csv) when
the page is read.
"""

from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]

project = "ensembles-lab"
author = "the ensembles-lab team"
extensions = [
    "myst_parser",
    "numpydoc",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.doctest",
]
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build"]
myst_heading_anchors = 3
html_theme = "pydata_sphinx_theme"
html_title = "ensembles-lab"
html_theme_options = {"navigation_with_keys": False}

# numpydoc renders the docstrings' sections; the class's methods are autodoc's members
numpydoc_show_class_members = False
autodoc_default_options = {"members": True, "undoc-members": True, "inherited-members": True}
autodoc_member_order = "bysource"
autosummary_generate = False

# the estimators' Examples (and the pages' doctest blocks) run under `-b doctest`
doctest_global_setup = "import numpy as np"

bench_results = str(ROOT / "reports" / "out" / "bench.csv")
BENCH_COLUMNS = ["case", "engine", "fit_seconds", "predict_seconds", "first_call_seconds",
                 "ratio_to_fastest_reference", "fit_added_mb", "score", "repeats"]


def skip_foreign_member(app, what, name, obj, skip, options):
    """A class's members are those written in ensembles (fit, predict, ...), not scikit-learn's
    (get_params, score, set_fit_request, ...): their pages are scikit-learn's."""
    if what != "class":
        return None
    defined = getattr(obj, "fget", obj)
    return None if (getattr(defined, "__module__", None) or "").startswith("ensembles") else True


def bench_tables(path: Path) -> str:
    """The performance page's tables from bench.csv (experiments/bench.py: one row per case
    and engine, medians), or how to produce them."""
    if not path.is_file():
        where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        return (f"No results yet: there is no `{where}`. Run `make bench` (or one case: "
                "`make bench ARGS=\"--cases gbt_depthwise --repeats 1\"`) and build the docs "
                "again.\n")
    summary = pd.read_csv(path)
    cpus = ", ".join(summary.cpu.dropna().unique())
    columns = [column for column in BENCH_COLUMNS if column in summary]
    cases = summary[columns].to_markdown(index=False, floatfmt=".3g", missingval="")
    targets = summary[summary.target.notna() & (summary.target != "")][["case", "target"]]
    return (f"CPU: {cpus}. Medians per case and engine; ratio = ours / the fastest reference "
            "(time of the case's timed step).\n\n"
            f"### Cases\n\n{cases}\n\n"
            f"### Targets\n\n{targets.drop_duplicates().to_markdown(index=False)}\n")


def write_bench_tables(app, docname, source):
    """Replaces the performance page's `{bench-tables}` line with the tables."""
    if docname == "performance":
        tables = bench_tables(Path(app.config.bench_results))
        source[0] = source[0].replace("{bench-tables}", tables)


def read_performance_again(app, env, added, changed, removed):
    """The performance page is read on every build: bench.csv may have changed, its text not."""
    return ["performance"]


def setup(app):
    app.add_config_value("bench_results", bench_results, "env")
    app.connect("autodoc-skip-member", skip_foreign_member)
    app.connect("source-read", write_bench_tables)
    app.connect("env-get-outdated", read_performance_again)
