"""The FHT (2000) figure and table from a small synthetic store whose curves are known by hand:
one panel per tree size J (read from each run's method.max_leaf_nodes), one line per algorithm
and K-class scheme (SAMME and AdaBoost.MH apart), the seed means at the table's iteration
counts, the paper's column; runs without a leaf limit are left out."""

import time

import pandas as pd
import pytest
from mlflow import MlflowClient
from mlflow.entities import Metric, Param

from reports.build import build_report
from reports.fht import (
    ALGORITHMS,
    NO_LEAF_LIMIT,
    algorithm_key,
    fht_figure,
    mean_curves,
    terminal_nodes,
)
from reports.render import MISSING
from reports.runs import method_option, split_methods

ROUNDS = (1, 100, 200)  # the store's curve steps: the table shows @100 and @200 only
SIZES = (2, 8)  # stumps and 8-node trees


def error(method: str, nodes: int, seed: int, rounds: int) -> float:
    """0.5 - rounds / 1000, + 0.01 per algorithm in ALGORITHMS' order, + 0.1 for 8-node trees,
    + 0.002 per seed: the mean over seeds 0 and 1 adds 0.001."""
    return (0.5 - rounds / 1000 + 0.01 * list(ALGORITHMS).index(method)
            + 0.1 * (nodes == 8) + 0.002 * seed)  # fmt: skip


def log_run(client, experiment, method, nodes, seed, dataset="nested_spheres"):
    """A job of `method` with trees of `nodes` leaves (None: of depth 1, no leaf limit, as a
    job outside the preset logs it), its curve error(...)."""
    tags = {"dataset": dataset, "method": method, "engine": "inhouse", "loss": "auto",
            "seed": str(seed), "task": "multiclass", "status": "ok",
            "run_key": f"{dataset}-{method}-{nodes}-{seed}"}  # fmt: skip
    run = client.create_run(experiment, tags=tags)
    now = int(time.time() * 1000)
    curve = [Metric("curve_test_error", error(method, nodes or 2, seed, r), now, r)
             for r in ROUNDS]  # fmt: skip
    final = Metric("test_error", error(method, nodes or 2, seed, ROUNDS[-1]), now, 0)
    params = [Param("method.max_leaf_nodes", str(nodes)),
              Param("method.max_depth", "1" if nodes is None else "None")]
    client.log_batch(run.info.run_id, metrics=[*curve, final], params=params)
    client.set_terminated(run.info.run_id)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    root = tmp_path_factory.mktemp("fht_store")
    uri = f"sqlite:///{root}/mlflow.db"
    client = MlflowClient(tracking_uri=uri)
    experiment = client.create_experiment("fht", artifact_location=str(root / "artifacts"))
    for method in ALGORITHMS:
        for nodes in SIZES:
            for seed in (0, 1):
                log_run(client, experiment, method, nodes, seed)
    log_run(client, experiment, "logitboost", 2, 0, dataset="wine")  # one algorithm: no figure
    for seed in (0, 1):  # depth-limited trees, no J: in no panel and no row
        log_run(client, experiment, "real_adaboost", None, seed, dataset="iris")
    out = root / "out"
    return out, build_report(uri, "fht", out)



def test_the_figure_is_written_per_dataset_with_every_algorithm_and_scheme(report):
    out, paths = report
    names = {path.name for path in paths}
    assert {"fht2000_nested_spheres.png", "fht2000_nested_spheres.pdf"} <= names
    assert not any("fht2000_wine" in name or "fht2000_iris" in name for name in names)


def test_the_table_holds_the_seed_means_at_the_iteration_counts_beside_the_paper(report,
                                                                                  table_rows):
    markdown = (report[0] / "tables.md").read_text()
    rows = table_rows(markdown, "FHT (2000) simulation: nested_spheres")
    assert rows["trees / algorithm / engine"] == [
        "ours @100", "FHT @100", "ours @200", "FHT @200", "seeds"]  # fmt: skip
    assert len(rows) == 1 + len(SIZES) * len(ALGORITHMS)
    # stumps, Discrete SAMME: 0.5 - 0.1 + 0.001; Discrete AdaBoost.MH 0.01 above;
    # 8-node, LogitBoost (7th): 0.5 - 0.2 + 0.06 + 0.1 + 0.001
    assert rows["stumps (J = 2) / Discrete AdaBoost (SAMME) / inhouse"] == [
        "0.401", MISSING, "0.301", MISSING, "2"]  # fmt: skip
    assert rows["stumps (J = 2) / Discrete AdaBoost.MH / inhouse"] == [
        "0.411", MISSING, "0.311", MISSING, "2"]  # fmt: skip
    assert rows["8-node trees / LogitBoost / inhouse"] == [
        "0.561", MISSING, "0.461", MISSING, "2"]  # fmt: skip
    assert "Friedman, Hastie and Tibshirani (2000" in markdown
    assert "FHT (2000) simulation: wine" not in markdown
    assert "FHT (2000) simulation: iris" not in markdown


def test_the_figure_has_a_panel_per_tree_size_and_a_line_per_algorithm_and_scheme():
    curves = [{"nodes": n, "method": m, "engine": "inhouse", "seed": s, "rounds": r,
               "value": error(m, n, s, r)}
              for m in ALGORITHMS for n in SIZES for s in (0, 1) for r in ROUNDS]  # fmt: skip
    curves += [{"nodes": NO_LEAF_LIMIT, "method": "adaboost", "engine": "inhouse", "seed": 0,
                "rounds": r, "value": 0.0} for r in ROUNDS]  # fmt: skip
    figure = fht_figure(mean_curves(pd.DataFrame(curves)), "nested_spheres")
    axes = figure.axes
    assert [ax.get_title() for ax in axes] == ["stumps (J = 2)", "8-node trees"]
    for ax, nodes in zip(axes, SIZES, strict=True):
        lines = ax.get_lines()
        assert [line.get_label().split(",")[0] for line in lines] == list(ALGORITHMS.values())
        assert len({line.get_color() for line in lines}) == len(ALGORITHMS)
        for line, method in zip(lines, ALGORITHMS, strict=True):
            expected = [error(method, nodes, 0, r) + 0.001 for r in ROUNDS]
            assert list(line.get_xdata()) == list(ROUNDS)
            assert list(line.get_ydata()) == pytest.approx(expected)
    assert {"Discrete AdaBoost (SAMME)", "Discrete AdaBoost.MH", "Real AdaBoost (SAMME.R)",
            "Real AdaBoost.MH"} <= set(ALGORITHMS.values())


def test_each_tree_size_is_a_column_of_its_own_in_the_general_tables(report):
    """Runs of one dataset and method that differ in method.max_leaf_nodes are not pooled as
    seeds (the report refused them): each tree size is a method label of its own."""
    results = pd.read_csv(report[0] / "results.csv")
    labels = set(results.loc[results["dataset"] == "nested_spheres", "method"])
    assert labels == {f"{method} [max_leaf_nodes={nodes}]"
                      for method in ALGORITHMS for nodes in SIZES}  # fmt: skip
    assert set(results.loc[results["dataset"] == "wine", "method"]) == {"logitboost"}
    assert "| gentle_adaboost_mh [max_leaf_nodes=8] / inhouse" in (
        report[0] / "tables.md").read_text()


def test_a_tree_size_is_its_leaf_limit():
    assert [terminal_nodes(value) for value in ("2", 8, "None", None)] == [
        2, 8, NO_LEAF_LIMIT, NO_LEAF_LIMIT]


def test_split_methods_labels_only_the_parameters_that_vary_within_a_dataset():
    runs = pd.DataFrame({"run_id": list("abcde"), "dataset": ["d", "d", "d", "e", "e"],
                         "method": ["gbt"] * 5})  # fmt: skip
    params = pd.DataFrame({"method.max_depth": ["2", "6", None, "2", "6"],
                           "method.n_estimators": ["50", "50", None, "50", "50"]},
                          index=list("abcde"))  # fmt: skip
    params.loc["e", "method.max_depth"] = "2"
    labels = split_methods(runs, params)["method"].tolist()
    # c logged no params (a job that failed early): its name stays; on e nothing varies
    assert labels == ["gbt [max_depth=2]", "gbt [max_depth=6]", "gbt", "gbt", "gbt"]
    assert [method_option(label) for label in labels] == ["gbt"] * 5


def test_a_sweep_over_the_scheme_keeps_samme_and_mh_apart():
    """`method=adaboost method.multiclass=samme,mh` logs one method name with two schemes: the
    mh runs are drawn as AdaBoost.MH's line, not averaged into SAMME's."""
    assert algorithm_key("adaboost", "mh") == "adaboost_mh"
    assert algorithm_key("real_adaboost", "mh") == "real_adaboost_mh"
    assert algorithm_key("adaboost", "samme") == "adaboost"
    assert algorithm_key("adaboost", None) == "adaboost"  # a run from before the parameter
    assert algorithm_key("logitboost", "mh") == "logitboost"  # no MH form
    assert algorithm_key("adaboost_mh", "mh") == "adaboost_mh"
