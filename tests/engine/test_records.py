"""The engine's records (issue 42): kernels take named records, not long lists of arrays, and
a record reaches numba as one type whatever Python or numpy values it was built from (numba
compiles a kernel once more for every other type of an argument)."""

import importlib
import inspect
import pkgutil

import numba
import numpy as np
import pytest
from numba.core.registry import CPUDispatcher

import ensembles.engine
from ensembles.engine.cart_grower import CartParams
from ensembles.engine.gradient_grower import LOSSGUIDE, GradientParams
from ensembles.methods.boosting import TreeParams

MAX_PARAMETERS = 12
LONGER_KERNELS = {  # kernel: why it still takes more than MAX_PARAMETERS
    "ensembles.engine.splitting._newton_split_gains":
        "the vectorized gain loop of a split scan takes its scalars loose",
}


def _engine_kernels():
    """Every numba kernel defined in a module of ensembles.engine, by qualified name."""
    kernels = {}
    for module_info in pkgutil.iter_modules(ensembles.engine.__path__):
        module = importlib.import_module(f"ensembles.engine.{module_info.name}")
        for name, value in vars(module).items():
            if isinstance(value, CPUDispatcher) and value.py_func.__module__ == module.__name__:
                kernels[f"{module.__name__}.{name}"] = value
    return kernels


def test_no_engine_kernel_takes_more_than_twelve_parameters():
    """A kernel takes its tree's parameters, nodes and scratch as records: none takes more
    than MAX_PARAMETERS arguments, but the listed ones (the CART node evaluation took 31)."""
    kernels = _engine_kernels()
    assert len(kernels) > 50
    longer = {name for name, kernel in kernels.items()
              if len(inspect.signature(kernel.py_func).parameters) > MAX_PARAMETERS}
    assert longer == set(LONGER_KERNELS)


@pytest.mark.parametrize(("loose", "python"), [
    (CartParams(np.int64(3), np.int32(1), np.int64(4), max_leaves=np.uint8(0),
                min_samples_leaf=np.int64(2), min_child_weight=0, min_split_gain=np.float32(0),
                random_splits=np.bool_(True)),
     CartParams(3, 1, 4, 0, 2, 2, 0.0, 0.0, True)),
    (GradientParams(np.int64(LOSSGUIDE), 0, np.int64(31), 1, np.float32(0.5), 0.0, 1.0,
                    np.int32(2), 1e-6, 1),
     GradientParams(LOSSGUIDE, 0, 31, 1.0, 0.5, 0.0, 1.0, 2, 1e-6, 1.0)),
])
def test_a_typed_record_is_one_numba_type_whatever_it_was_built_from(loose, python):
    """typed() gives every field its declared Python type: a record built from numpy scalars
    and int literals is the numba type of one built from Python values, and so is the
    gradient grower's record that the estimators build (TreeParams.grower_params)."""
    assert numba.typeof(loose) != numba.typeof(python)  # numba would compile twice
    assert numba.typeof(loose.typed()) == numba.typeof(python.typed())
    assert loose.typed() == python
    if isinstance(python, GradientParams):
        estimators = TreeParams(grow_policy="lossguide", max_depth=np.int64(0), max_leaves=31,
                                reg_lambda=1, min_child_samples=np.int64(2))
        assert numba.typeof(estimators.grower_params()) == numba.typeof(python.typed())
