# The two commands a new machine needs: `make run` and `make test`.
# Everything else here is what those two do, so a fresh clone needs only
# Python 3.11, Node 20 and make.

PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
NODE_STAMP := node_modules/.installed
# Azure Scheduler's Node SDK, a client in the API tests (tests/api/test_node_sdk.py): `make test`
# installs it, `make run` does not need it.
NODE_SDK_STAMP := tests/node_sdk/node_modules/.installed

.PHONY: run test lint bench setup clean

setup: $(STAMP) $(NODE_STAMP)

$(STAMP): requirements.txt requirements-dev.txt requirements-worker.txt
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "$(PYTHON) not found; set PYTHON=python3"; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	$(PY) -m pip install --quiet --disable-pip-version-check --ignore-requires-python \
		-r requirements-worker.txt
	touch $@

$(NODE_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

$(NODE_SDK_STAMP): tests/node_sdk/package.json tests/node_sdk/package-lock.json
	npm ci --prefix tests/node_sdk --no-audit --no-fund --loglevel=error
	touch $@

## Run the scheduler on this machine (Azurite + the local Functions host).
## Options go through ARGS: make run ARGS="--port 7072" (make run ARGS=--help lists them).
run: setup
	$(PY) -m devtools.local_run $(ARGS)

## The whole suite: starts its own Azurite on free ports, stops it at the end.
test: setup $(NODE_SDK_STAMP)
	$(PY) -m pytest

lint: setup
	$(VENV)/bin/ruff check .
	$(PY) -m mypy

bench: setup
	# compare.py is not a benchmark: it runs one on two checkouts (see its docstring).
	for script in bench/*.py; do [ $$script = bench/compare.py ] || $(PY) $$script || exit 1; done

clean:
	rm -rf $(VENV) node_modules tests/node_sdk/node_modules .pytest_cache .hypothesis .ruff_cache
