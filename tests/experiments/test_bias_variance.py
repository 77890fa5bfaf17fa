"""Bias-variance decompositions checked by hand on tiny arrays and on a small real job."""

import math

import numpy as np
import pytest
from hydra import compose, initialize_config_dir
from mlflow import MlflowClient

from experiments.bias_variance import (
    bootstrap_samples,
    main_prediction,
    squared_loss_decomposition,
    zero_one_decomposition,
)
from experiments.configs import EvalKind
from experiments.paths import CONF_DIR
from experiments.run import run_job


def test_squared_loss_splits_into_bias_and_variance_by_hand():
    predictions = np.array([[1.0, 2.0], [3.0, 2.0]])  # 2 training sets x 2 test points
    y = np.array([2.0, 0.0])
    # main prediction (2, 2); loss (1 + 4 + 1 + 4) / 4; bias^2 (0 + 4) / 2; variance (1+0+1+0)/4
    assert squared_loss_decomposition(predictions, y) == {
        "bv_loss": 2.5,
        "bv_bias": 2.0,
        "bv_variance": 0.5,
    }


def test_main_prediction_is_the_mode_and_the_smallest_label_of_a_tie():
    labels = np.array([["b", "a", "c"], ["b", "c", "a"], ["a", "c", "b"], ["c", "a", "b"]])
    assert main_prediction(labels).tolist() == ["b", "a", "b"]  # column 1: a and c tie


def test_two_class_zero_one_decomposition_by_hand():
    # columns: unbiased (main 0 = y, V = 1/4); biased (main 0 != y = 1, V = 1/4, loss 3/4);
    # a tie 0, 0, 1, 1 -> main 0 = y, V = 1/2.
    predictions = np.array([[0, 0, 1], [0, 0, 1], [1, 0, 0], [0, 1, 0]])
    y = np.array([0, 1, 0])
    result = zero_one_decomposition(predictions, y)
    assert result["bv_loss"] == pytest.approx((0.25 + 0.75 + 0.5) / 3)
    assert result["bv_bias"] == pytest.approx(1 / 3)
    assert result["bv_variance_unbiased"] == pytest.approx((0.25 + 0.5) / 3)
    assert result["bv_variance_biased"] == pytest.approx(0.25 / 3)  # = E_x[B V] for 2 classes
    assert result["bv_variance"] == pytest.approx(0.5 - 1 / 3)
    assert result["bv_bias"] + result["bv_variance"] == pytest.approx(result["bv_loss"])


def test_multiclass_zero_one_decomposition_uses_domingos_c2():
    # y = 0, predictions 1, 1, 2, 0: main 1 (biased), V = P(pred != 1) = 1/2, loss 3/4.
    # c2 = -P(pred = y | pred != main) = -1/2, so the biased variance is 1/4, not B V = 1/2.
    result = zero_one_decomposition(np.array([[1], [1], [2], [0]]), np.array([0]))
    assert result == pytest.approx(
        {
            "bv_loss": 0.75,
            "bv_bias": 1.0,
            "bv_variance": -0.25,
            "bv_variance_unbiased": 0.0,
            "bv_variance_biased": 0.25,
        }
    )


def test_the_split_is_exact_on_random_multiclass_predictions():
    rng = np.random.RandomState(0)
    predictions, y = rng.randint(0, 4, (15, 200)), rng.randint(0, 4, 200)
    result = zero_one_decomposition(predictions, y)
    assert result["bv_bias"] + result["bv_variance"] == pytest.approx(result["bv_loss"], abs=1e-12)


def test_bootstrap_samples_draw_the_pool_with_replacement_reproducibly():
    pool = np.array([3, 5, 7, 11])
    first = list(bootstrap_samples(pool, 3, seed=4))
    assert [len(rows) for rows in first] == [4, 4, 4]
    assert set(np.concatenate(first)) <= set(pool)
    assert np.array_equal(first, list(bootstrap_samples(pool, 3, seed=4)))


def test_the_preset_runs_the_bias_variance_protocol():
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose("config", overrides=["+sweep=bias_variance"], return_hydra_config=True)
    params = {key: value.split(",") for key, value in cfg.hydra.sweeper.params.items()}
    assert params == {
        "dataset": ["breast_cancer", "friedman1"],
        "method": ["large_tree", "bagging", "random_forest", "adaboost", "gbt", "l2boost"],
        "engine": ["inhouse"],
        "seed": ["0", "1", "2"],
    }
    assert (cfg.eval.kind, cfg.eval.n_bootstrap) == (EvalKind.bias_variance, 20)
    assert cfg.mlflow.experiment_name == "bias_variance"


@pytest.mark.parametrize(
    ("dataset", "method"),
    [("breast_cancer", "bagging"), ("diabetes", "bagging")],
)
def test_a_job_logs_a_decomposition_that_sums_to_its_test_loss(
    compose_job, runs_of, dataset, method
):
    cfg = compose_job(
        f"dataset={dataset}",
        f"method={method}",
        "method.n_estimators=3",
        "eval.kind=bias_variance",
        "eval.n_bootstrap=4",
    )
    assert run_job(cfg) == "ok"
    [run] = runs_of(cfg)
    metrics = run.data.metrics
    assert metrics["bv_bias"] + metrics["bv_variance"] == pytest.approx(metrics["bv_loss"])
    if dataset == "diabetes":  # mean over the 4 fits of test_rmse^2 is the expected loss
        history = MlflowClient(cfg.mlflow.tracking_uri).get_metric_history(
            run.info.run_id, "split_test_rmse"
        )
        assert len(history) == 4
        assert np.mean([m.value**2 for m in history]) == pytest.approx(metrics["bv_loss"])
    else:  # the mean 0-1 loss over the fits is the mean test_error
        assert metrics["test_error"] == pytest.approx(metrics["bv_loss"])
        assert math.isclose(
            metrics["bv_variance"],
            metrics["bv_variance_unbiased"] - metrics["bv_variance_biased"],
            abs_tol=1e-12,
        )
