# `make sweep` and `make test` are the only set-up commands: both create .venv on first use.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
TEAM_STAMP := $(VENV)/.team-installed
WARM_STAMP := $(VENV)/.warmed
EXP ?= default
ARGS ?=

PIP := $(PY) -m pip install --quiet --disable-pip-version-check
LOCK := requirements/sweep.lock
TEAM_LOCK := requirements/team.lock
# the locks: exact versions with hashes, for Linux x86_64 and Python 3.11; pyproject.toml keeps
# the compatible ranges for installing the package into another environment
UV_COMPILE := $(VENV)/bin/uv pip compile pyproject.toml --quiet --generate-hashes --upgrade \
	--python-version 3.11 --python-platform x86_64-unknown-linux-gnu -c requirements/constraints.txt

.PHONY: sweep test report ui bench lint server lock data docs

$(STAMP): pyproject.toml $(LOCK)
	$(PYTHON) -m venv $(VENV)
	$(PIP) --require-hashes -r $(LOCK)
	$(PIP) --no-deps -e .
	touch $(STAMP)

# numba's cache of the engine, filled on two processes after installing and again after any
# change to the package's sources (a pull, a checkout): the engine's cache is named after its
# sources (ensembles/engine/__init__.py), so without this the first job after a change would
# compile every kernel on one process
$(WARM_STAMP): $(STAMP) $(wildcard ensembles/*.py ensembles/*/*.py)
	$(PY) -m ensembles.warm
	touch $(WARM_STAMP)

# the optional extras of a team store and a cluster (PostgreSQL, its driver, Ray) and of the
# documentation site (Sphinx): make server, make docs and make test
$(TEAM_STAMP): $(STAMP) $(TEAM_LOCK)
	$(PIP) --require-hashes -r $(TEAM_LOCK)
	touch $(TEAM_STAMP)

# re-resolve both locks to the newest releases within pyproject.toml's ranges (the sweep's lock
# constrained by the team's, so that both pin the same versions); then run make test, whose
# parity tests check the new versions
lock: $(STAMP)
	$(PIP) uv
	$(UV_COMPILE) --extra dev --extra team --extra docs -o $(TEAM_LOCK)
	$(UV_COMPILE) --extra dev -c $(TEAM_LOCK) -o $(LOCK)

# the default sweep, unless ARGS names another preset (ARGS="+sweep=parity" or "sweep=parity")
DEFAULT_SWEEP := $(if $(findstring sweep=,$(ARGS)),,+sweep=default)

sweep: $(WARM_STAMP)
	$(PY) -m experiments.run -m $(DEFAULT_SWEEP) $(ARGS)

# the tests on TEST_WORKERS processes (pytest-xdist): a module per worker at a time (its
# module-scoped servers start once), the modules with slow tests first (tests/conftest.py).
# A worker that crashes (a segfault in a kernel) ends the run, naming its test: replacing it
# re-runs or, under --dist loadfile, can hang the run (pytest-xdist issues 784, 1378)
TEST_WORKERS ?= 2
test: $(TEAM_STAMP) $(WARM_STAMP)
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder \
		--max-worker-restart=0 $(ARGS)

report: $(STAMP)
	$(PY) -m reports --experiment $(EXP) --out reports/out $(ARGS)

ui: $(STAMP)
	$(PY) -m experiments.mlflow_ui --experiment $(EXP) $(ARGS)

bench: $(WARM_STAMP)
	$(PY) -m experiments.bench $(ARGS)

lint: $(STAMP)
	$(VENV)/bin/ruff check .

# the documentation site into docs/_build/html, warnings as errors (make test builds it too:
# tests/test_docs.py)
docs: $(TEAM_STAMP)
	$(VENV)/bin/sphinx-build -W --keep-going -b html docs docs/_build/html

# a benchmark suite into the offline cache, on a machine with internet (make data SUITE=cc18)
data: $(STAMP)
	$(PY) -m experiments.data fetch $(SUITE)

# a team store on this host: PostgreSQL + mlflow server on 127.0.0.1:5000, data in .team/
server: $(TEAM_STAMP)
	$(PY) -m experiments.store.team_server $(ARGS)
