"""The FHT (2000) simulation preset: its jobs, its data (three nested spheres of equal
probability in 10 dimensions, drawn anew per seed), its 3000 / 10000 split, the algorithm each
method option runs, and scikit-learn's refusal of the AdaBoosts it does not have."""

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

ALGORITHM = {"adaboost": "SAMME", "real_adaboost": "SAMME.R", "gentle_adaboost": "gentle"}


def chi2_10_cdf(r: np.ndarray) -> np.ndarray:
    """chi2 with 10 df in closed form: 1 - exp(-r/2) sum_{i<5} (r/2)^i / i! (even df)."""
    half = r / 2
    return 1 - np.exp(-half) * sum(half**i / math.factorial(i) for i in range(5))


def test_the_preset_is_4_algorithms_x_3_tree_sizes_x_5_seeds():
    """The grid as the sweeper reads it (that every job composes, 60 of them, is
    test_config_composition's)."""
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose("config", overrides=["+sweep=fht2000"], return_hydra_config=True)
    grid = {key: str(value).split(",") for key, value in cfg.hydra.sweeper.params.items()}
    assert grid == {"method": [*ALGORITHM, "logitboost"], "method.max_depth": ["1", "2", "3"],
                    "engine": ["inhouse"], "seed": ["0", "1", "2", "3", "4"]}  # fmt: skip
    assert (cfg.method.n_estimators, cfg.mlflow.experiment_name) == (800, "fht2000")


@pytest.mark.parametrize("method", ALGORITHM)
def test_each_adaboost_option_runs_its_algorithm_without_shrinkage(compose_job, method):
    cfg = compose_job("+sweep=fht2000", f"method={method}", "method.max_depth=3")
    assert cfg.method.algorithm.value == ALGORITHM[method]
    assert (cfg.method.n_estimators, cfg.method.learning_rate, cfg.method.max_depth) == (
        800, 1.0, 3)


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


def test_an_unknown_algorithm_is_refused_with_the_allowed_ones(compose_job):
    with pytest.raises(ConfigCompositionException) as error:
        compose_job("method=adaboost", "method.algorithm=real")
    assert "expected one of [SAMME, SAMME.R, gentle]" in str(error.value.__cause__)
