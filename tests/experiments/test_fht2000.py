"""The FHT (2000) simulation preset: its jobs (both K-class schemes of each AdaBoost, J-node
trees grown best first, ten seeds), its data (three nested spheres of equal probability in 10
dimensions, drawn anew per seed), its 3000 / 10000 split, the algorithm and scheme each method
option runs, and scikit-learn's refusal of the AdaBoosts it does not have."""

import math

import numpy as np
import pytest
from hydra import compose, initialize_config_dir
from hydra.errors import ConfigCompositionException

from experiments.data.datasets import load_dataset
from experiments.engines import build_estimator
from experiments.engines.spec import SkippedJob
from experiments.evaluation import splits
from experiments.paths import CONF_DIR

ALGORITHM = {  # method option -> (algorithm, multiclass)
    "adaboost": ("SAMME", "samme"), "real_adaboost": ("SAMME.R", "samme"),
    "gentle_adaboost": ("gentle", "samme"), "adaboost_mh": ("SAMME", "mh"),
    "real_adaboost_mh": ("SAMME.R", "mh"), "gentle_adaboost_mh": ("gentle", "mh"),
}


def chi2_10_cdf(r: np.ndarray) -> np.ndarray:
    """chi2 with 10 df in closed form: 1 - exp(-r/2) sum_{i<5} (r/2)^i / i! (even df)."""
    half = r / 2
    return 1 - np.exp(-half) * sum(half**i / math.factorial(i) for i in range(5))


def test_the_preset_is_7_algorithms_x_3_tree_sizes_x_10_seeds():
    """The grid as the sweeper reads it (that every job composes, 210 of them, is
    test_config_composition's): each AdaBoost under both schemes, and LogitBoost."""
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose("config", overrides=["+sweep=fht2000"], return_hydra_config=True)
    grid = {key: str(value).split(",") for key, value in cfg.hydra.sweeper.params.items()}
    assert grid == {"method": [*ALGORITHM, "logitboost"],
                    "method.max_leaf_nodes": ["2", "4", "8"], "engine": ["inhouse"],
                    "seed": [str(seed) for seed in range(10)]}  # fmt: skip
    assert (cfg.method.n_estimators, cfg.mlflow.experiment_name) == (800, "fht2000")


@pytest.mark.parametrize("method", [*ALGORITHM, "logitboost"])
def test_each_option_runs_its_algorithm_and_scheme_on_j_node_trees(compose_job, method):
    """No shrinkage, no depth limit: the trees' size is max_leaf_nodes, grown best first."""
    cfg = compose_job("+sweep=fht2000", f"method={method}", "method.max_leaf_nodes=4")
    if method in ALGORITHM:
        assert (cfg.method.algorithm.value, cfg.method.multiclass.value) == ALGORITHM[method]
    assert (cfg.method.n_estimators, cfg.method.learning_rate, cfg.method.max_depth,
            cfg.method.max_leaf_nodes) == (800, 1.0, None, 4)  # fmt: skip
    model = build_estimator(cfg, (3000, 10))
    assert (model.max_depth, model.max_leaf_nodes) == (None, 4)
    if method in ALGORITHM:
        assert (model.algorithm, model.multiclass) == ALGORITHM[method]


def test_the_data_are_three_chi2_10_shells_drawn_per_seed_split_3000_10000(compose_job):
    cfg = compose_job("+sweep=fht2000", "method=logitboost", "seed=3")
    assert cfg.dataset.data_seed == 3
    X, y = load_dataset(cfg.dataset)
    assert X.shape == (13000, 10)
    # class k iff k/3 <= F(sum x_j^2) < (k+1)/3, F the chi2_10 cdf: shells of equal probability
    np.testing.assert_array_equal(y, np.floor(3 * chi2_10_cdf((X**2).sum(axis=1))))
    np.testing.assert_allclose(np.bincount(y) / len(y), 1 / 3, atol=0.015)
    [(train, test)] = list(splits(cfg.eval, cfg.dataset.task, X, y, cfg.seed))
    assert (len(train), len(test)) == (3000, 10000)
    other, _ = load_dataset(compose_job("+sweep=fht2000", "method=logitboost", "seed=4").dataset)
    assert not np.allclose(X, other)


@pytest.mark.parametrize("algorithm", ["SAMME.R", "gentle"])
def test_scikit_learn_skips_the_adaboosts_it_lacks_with_the_reason(compose_job, algorithm):
    cfg = compose_job("method=adaboost", f"method.algorithm={algorithm}", "engine=sklearn")
    with pytest.raises(SkippedJob, match=rf"SAMME only .*removed SAMME\.R in 1\.6.*"
                                         rf"algorithm={algorithm}$"):  # fmt: skip
        build_estimator(cfg, (100, 4))
    samme = compose_job("method=adaboost", "engine=sklearn")
    assert build_estimator(samme, (100, 4)).get_params()["estimator__max_depth"] == 1


def test_scikit_learn_runs_adaboost_mh_for_two_classes_only(compose_job):
    """AdaBoost.MH of K = 2 is SAMME (ensembles.methods.adaboost_rounds): scikit-learn runs it
    there, on J-node trees grown best first as ours, and skips it for K > 2 with the reason."""
    binary = compose_job("dataset=breast_cancer", "method=adaboost_mh", "engine=sklearn",
                         "method.max_depth=null", "method.max_leaf_nodes=4")
    params = build_estimator(binary, (100, 4)).get_params()
    assert (params["estimator__max_depth"], params["estimator__max_leaf_nodes"]) == (None, 4)
    three = compose_job("+sweep=fht2000", "method=adaboost_mh", "engine=sklearn")
    with pytest.raises(SkippedJob, match=r"no AdaBoost\.MH for K > 2 classes \(multiclass=mh\)$"):
        build_estimator(three, (100, 4))


@pytest.mark.parametrize("key, value, choices", [
    ("algorithm", "real", "[SAMME, SAMME.R, gentle]"), ("multiclass", "ovr", "[samme, mh]")])
def test_an_unknown_algorithm_or_scheme_is_refused_with_the_allowed_ones(compose_job, key, value,
                                                                        choices):
    with pytest.raises(ConfigCompositionException) as error:
        compose_job("method=adaboost", f"method.{key}={value}")
    assert f"expected one of {choices}" in str(error.value.__cause__)
