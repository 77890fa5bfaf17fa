"""The ESL section 10.1 preset: its jobs, its 2000 / 10000 split, the stump and the 244-node tree
it builds, and (slow) the test errors of its seed-0 jobs beside the book's."""

import numpy as np
import pytest
from hydra import compose, initialize_config_dir
from mlflow import MlflowClient
from sklearn.tree import DecisionTreeClassifier

from experiments.callback import sweep_job_configs
from experiments.configs import method_key
from experiments.data.datasets import load_dataset
from experiments.engines import build_estimator
from experiments.evaluation import splits
from experiments.paths import CONF_DIR
from experiments.run import run_job

BOOK_TEST_ERROR = {"stump": 0.458, "large_tree": 0.247, "adaboost_400": 0.058}  # ESL Fig. 10.2


def test_the_preset_is_3_methods_x_2_engines_x_5_seeds():
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose("config", overrides=["+sweep=esl_10_2"], return_hydra_config=True)
        jobs = sweep_job_configs(cfg)
    cells = {(job.method.name, job.engine.name, job.seed) for job in jobs}
    assert len(jobs) == len(cells) == 30
    expected = {
        (method, engine, seed)
        for method in BOOK_TEST_ERROR
        for engine in ("inhouse", "sklearn")
        for seed in range(5)
    }
    assert cells == expected
    assert cfg.mlflow.experiment_name == "esl_10_2"


def test_each_job_trains_on_2000_rows_and_tests_on_10000(compose_job):
    cfg = compose_job("+sweep=esl_10_2", "method=stump", "seed=3")
    assert (cfg.dataset.name, cfg.dataset.n_samples, cfg.eval.test_size) == (
        "hastie_10_2",
        12000,
        10000,
    )
    X, y = load_dataset(cfg.dataset)
    [(train, test)] = list(splits(cfg.eval, cfg.dataset.task, X, y, cfg.seed))
    assert (len(train), len(test)) == (2000, 10000)
    assert set(train).isdisjoint(test)


def test_the_stump_is_one_round_of_adaboost_and_the_large_tree_has_122_leaves(compose_job):
    stump = compose_job("+sweep=esl_10_2", "method=stump", "engine=sklearn")
    assert method_key(stump.method) == "adaboost"
    params = build_estimator(stump, (2000, 10)).get_params()
    assert (params["n_estimators"], params["estimator__max_depth"]) == (1, 1)

    tree = compose_job("+sweep=esl_10_2", "method=large_tree", "engine=sklearn")
    assert method_key(tree.method) == "random_forest"
    X, y = load_dataset(tree.dataset)
    train, _ = next(splits(tree.eval, tree.dataset.task, X, y, tree.seed))
    forest = build_estimator(tree, X.shape).fit(X[train], y[train])
    [fitted] = forest.estimators_
    assert (fitted.get_n_leaves(), fitted.tree_.node_count) == (122, 243)
    # one tree on all rows and all features is scikit-learn's best-first CART itself
    cart = DecisionTreeClassifier(max_leaf_nodes=122, random_state=fitted.random_state)
    cart.fit(X[train], y[train])
    np.testing.assert_array_equal(fitted.predict(X), cart.predict(X))


@pytest.mark.slow
def test_seed_0_reproduces_the_book_where_scikit_learn_does(compose_job, runs_of):
    """Book (ESL, section 10.1): stump 45.8%, 244-node tree 24.7%, AdaBoost of 400 stumps
    5.8%. On these splits scikit-learn's SAMME itself gets 10.7-11.4% (measured with the
    scikit-learn version of the lock), so the book's 5.8% is not reachable by a faithful SAMME
    here: the in-house AdaBoost is held to scikit-learn's figure, with the book's beside it."""
    errors = {}
    for method in BOOK_TEST_ERROR:
        for engine in ("inhouse", "sklearn"):
            cfg = compose_job("+sweep=esl_10_2", f"method={method}", f"engine={engine}")
            assert run_job(cfg) == "ok"
    client = MlflowClient(cfg.mlflow.tracking_uri)
    for logged in runs_of(cfg):
        method, engine = logged.data.tags["method"], logged.data.tags["engine"]
        errors[method, engine] = logged.data.metrics["test_error"]
        if method == "adaboost_400":
            history = client.get_metric_history(logged.info.run_id, "curve_test_error")
            curve = {metric.step: metric.value for metric in history}
            assert {1, 100, 200, 400} <= curve.keys()
            # round 1 of AdaBoost is the stump
            errors["round_1", engine] = curve[1]
    for engine in ("inhouse", "sklearn"):
        assert errors["stump", engine] == pytest.approx(BOOK_TEST_ERROR["stump"], abs=0.02)
        assert errors["round_1", engine] == pytest.approx(errors["stump", engine])
        assert errors["large_tree", engine] == pytest.approx(
            BOOK_TEST_ERROR["large_tree"], abs=0.02
        )
        assert errors["adaboost_400", engine] < 0.13
    assert np.isclose(
        errors["adaboost_400", "inhouse"], errors["adaboost_400", "sklearn"], atol=0.015
    )
