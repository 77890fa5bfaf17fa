# `make sweep` and `make test` are the only set-up commands: both create .venv on first use.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
TEAM_STAMP := $(VENV)/.team-installed
EXP ?= default
ARGS ?=

.PHONY: sweep test report ui bench lint server

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e ".[dev]"
	touch $(STAMP)

# the optional extra of a team store (PostgreSQL, its driver): make server and make test
$(TEAM_STAMP): $(STAMP) pyproject.toml
	$(PY) -m pip install --quiet --disable-pip-version-check -e ".[dev,team]"
	touch $(TEAM_STAMP)

# the default sweep, unless ARGS names another preset (ARGS="+sweep=parity" or "sweep=parity")
DEFAULT_SWEEP := $(if $(findstring sweep=,$(ARGS)),,+sweep=default)

sweep: $(STAMP)
	$(PY) -m experiments.run -m $(DEFAULT_SWEEP) $(ARGS)

test: $(TEAM_STAMP)
	$(PY) -m pytest $(ARGS)

report: $(STAMP)
	$(PY) -m reports --experiment $(EXP) --out reports/out $(ARGS)

ui: $(STAMP)
	$(VENV)/bin/mlflow ui --host 127.0.0.1 \
		--backend-store-uri "$$($(PY) -c 'from experiments.store import tracking_uri; print(tracking_uri())')"

bench: $(STAMP)
	$(PY) -m experiments.bench $(ARGS)

lint: $(STAMP)
	$(VENV)/bin/ruff check .

# a team store on this host: PostgreSQL + mlflow server on 127.0.0.1:5000, data in .team/
server: $(TEAM_STAMP)
	$(PY) -m experiments.team_server $(ARGS)
