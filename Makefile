# The two set-up commands: `make run` serves the API on ./chatcrm.db; `make test` runs the suite.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# Serving needs the service's own dependencies only; the checks also need the dev extras.
# Each set has its stamp, so neither is installed twice; the dev set includes the service's.
# The client library (sdk/python) is installed with the service, which depends on it (the
# import/export command is built on it): in the same pip call, so pip takes it from here.
RUN_STAMP := $(VENV)/.installed
DEV_STAMP := $(VENV)/.installed-dev

.PHONY: run test lint format bench clean

define make_venv
	$(PYTHON) scripts/make_venv.py $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
endef

$(RUN_STAMP): pyproject.toml sdk/python/pyproject.toml scripts/make_venv.py
	$(make_venv)
	$(BIN)/python -m pip install -q -e sdk/python -e .
	touch $(RUN_STAMP)

$(DEV_STAMP): pyproject.toml sdk/python/pyproject.toml scripts/make_venv.py
	$(make_venv)
	$(BIN)/python -m pip install -q -e sdk/python -e '.[dev]'
	touch $(RUN_STAMP) $(DEV_STAMP)

run: $(RUN_STAMP)
	$(BIN)/chatcrm serve $(ARGS)

# Two test processes (pytest-xdist): the suite waits on servers and databases as much as
# it computes. PYTEST_WORKERS=0 runs it in this process.
PYTEST_WORKERS ?= 2

test: $(DEV_STAMP)
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) $(PYTEST_ARGS)

lint: $(DEV_STAMP)
	$(BIN)/ruff check src tests bench scripts sdk/python/src
	$(BIN)/ruff format --check src tests bench scripts sdk/python/src
	$(BIN)/mypy

format: $(DEV_STAMP)
	$(BIN)/ruff format src tests bench scripts sdk/python/src
	$(BIN)/ruff check --fix src tests bench scripts sdk/python/src

bench: $(DEV_STAMP)
	$(BIN)/python bench/run.py $(ARGS)
	$(BIN)/python bench/conversations.py $(ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build src/*.egg-info sdk/python/build sdk/python/src/*.egg-info
