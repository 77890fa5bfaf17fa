"""The lab's sweeper composes each job of a batch once: its check keeps the configs and the
launcher's loader hands them out (hydra_plugins/lab_sweeper)."""

import pickle

from omegaconf import OmegaConf

from experiments import callback
from hydra_plugins.lab_sweeper.lab_sweeper import BatchComposingLoader


class CountingLoader:
    """A stand-in for Hydra's config loader: composes {overrides} and counts the calls."""

    def __init__(self):
        self.calls = 0

    def load_sweep_config(self, master_config, sweep_overrides):
        self.calls += 1
        return OmegaConf.create({"overrides": list(sweep_overrides)})

    def get_sources(self):
        return ["conf"]


def test_a_batch_is_composed_once_and_each_config_handed_out_once():
    inner = CountingLoader()
    loader = BatchComposingLoader(inner)
    batch = [["seed=0"], ["seed=1"]]
    loader.compose_batch(OmegaConf.create(), batch)
    assert inner.calls == 2
    first = loader.load_sweep_config(OmegaConf.create(), ["seed=0"])
    assert first.overrides == ["seed=0"] and inner.calls == 2  # no second composition
    again = loader.load_sweep_config(OmegaConf.create(), ["seed=0"])  # handed out once only
    assert again.overrides == ["seed=0"] and inner.calls == 3
    assert loader.get_sources() == ["conf"]  # the rest is the loader's


def test_pickled_for_another_process_it_is_the_loader_itself():
    loader = BatchComposingLoader(CountingLoader())
    loader.compose_batch(OmegaConf.create(), [["seed=3"]])
    copy = pickle.loads(pickle.dumps(loader))
    assert isinstance(copy, CountingLoader) and copy.calls == 1
    assert copy.load_sweep_config(OmegaConf.create(), ["seed=3"]).overrides == ["seed=3"]
    assert copy.calls == 2  # composed there


def test_a_job_the_sweeps_check_composed_is_not_composed_again(monkeypatch):
    """The lab's callback composes every job to check the sweep (experiments.callback); the
    sweeper takes those configs instead of composing them a second time."""
    checked = OmegaConf.create({"overrides": ["seed=0"], "checked": True})
    monkeypatch.setitem(callback.COMPOSED, ("seed=0",), checked)
    inner = CountingLoader()
    loader = BatchComposingLoader(inner)
    loader.compose_batch(OmegaConf.create(), [["seed=0"], ["seed=1"]])
    assert inner.calls == 1  # only seed=1, which the check did not compose
    assert loader.load_sweep_config(OmegaConf.create(), ["seed=0"]) is checked
    assert ("seed=0",) not in callback.COMPOSED  # handed out once
