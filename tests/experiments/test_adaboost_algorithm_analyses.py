"""Every per-job analysis of a real (SAMME.R) or gentle AdaBoost job, run through the lab:
margins, learning curve, size, diversity (none for boosting) and bias-variance."""

import pandas as pd
import pytest
from mlflow import MlflowClient

from experiments.analyses.findings import MARGINS_ARTIFACT
from experiments.run import run_job


@pytest.mark.parametrize(("algorithm", "trees_a_round"), [("SAMME.R", 1), ("gentle", 3)])
def test_a_real_or_gentle_job_runs_every_split_analysis(
    compose_job, runs_of, tmp_path, algorithm, trees_a_round
):
    cfg = compose_job("dataset=iris", "method=adaboost", f"method.algorithm={algorithm}",
                      "method.n_estimators=10", "method.max_depth=2", "eval.curve_every=5")
    assert run_job(cfg) == "ok"
    [run] = runs_of(cfg)
    client = MlflowClient(cfg.mlflow.tracking_uri)
    assert run.data.params["method.algorithm"] == algorithm
    metrics = run.data.metrics
    assert metrics["n_trees"] == 10 * trees_a_round  # gentle: one tree per class and round
    assert not any(name.startswith("div_") for name in metrics)
    curve = client.get_metric_history(run.info.run_id, "curve_test_error")
    assert sorted(point.step for point in curve) == [1, 5, 10]
    assert max(curve, key=lambda point: point.step).value == pytest.approx(metrics["test_error"])
    margins = pd.read_csv(
        client.download_artifacts(run.info.run_id, MARGINS_ARTIFACT, str(tmp_path)))
    assert margins.groupby("rounds").size().to_dict() == {1: 112, 5: 112, 10: 112}  # 3/4 of 150
    assert margins["margin"].between(-1, 1).all()
    assert (margins.query("rounds == 10")["margin"] > 0).mean() > 0.9  # iris: few training errors


@pytest.mark.parametrize("algorithm", ["SAMME.R", "gentle"])
def test_a_real_or_gentle_job_decomposes_its_test_loss(compose_job, runs_of, algorithm):
    cfg = compose_job("dataset=iris", "method=adaboost", f"method.algorithm={algorithm}",
                      "method.n_estimators=5", "eval.kind=bias_variance", "eval.n_bootstrap=3")
    assert run_job(cfg) == "ok"
    [run] = runs_of(cfg)
    metrics = run.data.metrics
    assert metrics["bv_bias"] + metrics["bv_variance"] == pytest.approx(metrics["bv_loss"])
    assert metrics["test_error"] == pytest.approx(metrics["bv_loss"])
