# Two commands matter (see README):
#   make demo   set up the embedded runtime and run the demo
#   make test   set up everything (main venv with the spark extra, a separate venv for PyFlink) and run every test
PY ?= python3
VENV := .venv
FLINK_VENV := .venv-flink
PIP_FLAGS := -q --disable-pip-version-check

.PHONY: setup setup-core setup-flink demo test lint bench
setup-core: $(VENV)/.core
setup: $(VENV)/.installed
setup-flink: $(FLINK_VENV)/.installed

$(VENV)/.core: pyproject.toml
	test -d $(VENV) || $(PY) -m venv $(VENV)
	$(VENV)/bin/pip install $(PIP_FLAGS) -e .
	touch $@

$(VENV)/.installed: pyproject.toml
	test -d $(VENV) || $(PY) -m venv $(VENV)
	$(VENV)/bin/pip install $(PIP_FLAGS) -e '.[dev,spark]'
	touch $(VENV)/.core $@

# PyFlink 2.3 and its pinned dependencies live apart from pyspark's.
$(FLINK_VENV)/.installed: pyproject.toml
	test -d $(FLINK_VENV) || $(PY) -m venv $(FLINK_VENV)
	$(FLINK_VENV)/bin/pip install $(PIP_FLAGS) 'apache-flink==2.3.0'
	$(FLINK_VENV)/bin/pip install $(PIP_FLAGS) -e '.[test]'
	touch $@

demo: setup-core
	$(VENV)/bin/flowcep demo

test: setup setup-flink
	$(VENV)/bin/python -m pytest -q --ignore=tests/connectors/flink
	$(FLINK_VENV)/bin/python -m pytest -q tests/connectors/flink

lint: setup
	$(VENV)/bin/ruff check src tests benchmarks examples
	$(VENV)/bin/mypy src

bench: setup
	$(VENV)/bin/python benchmarks/run.py
