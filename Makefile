# Two commands matter (see README):
#   make demo   set up the embedded runtime and run the demo
#   make test   set up everything (main venv with the spark extra, a separate venv for PyFlink, PyPy's
#               venv) and run every test; the embedded runtime's tests run on PyPy too
PY ?= python3
VENV := .venv
FLINK_VENV := .venv-flink
PYPY ?= pypy3
PYPY_VENV := .venv-pypy
PIP_FLAGS := -q --disable-pip-version-check

.PHONY: setup setup-core setup-flink setup-pypy demo test test-pypy lint bench
setup-core: $(VENV)/.core
setup: $(VENV)/.installed
setup-flink: $(FLINK_VENV)/.installed
setup-pypy: $(PYPY_VENV)/.installed

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

# PyPy runs the embedded runtime about 3x faster than CPython (docs/runtime.md section 8); Debian 12
# ships PyPy 7.3.11 (Python 3.9), installed here when it is missing (root, or sudo without a password).
$(PYPY_VENV)/.installed: pyproject.toml
	command -v $(PYPY) >/dev/null || { SUDO=$$(test "$$(id -u)" = 0 || echo sudo -n); \
		export DEBIAN_FRONTEND=noninteractive; \
		$$SUDO apt-get install -y -q pypy3 || { $$SUDO apt-get update -q && $$SUDO apt-get install -y -q pypy3; }; }
	test -d $(PYPY_VENV) || $(PYPY) -m venv $(PYPY_VENV)
	$(PYPY_VENV)/bin/pip install $(PIP_FLAGS) -e '.[test]'
	touch $@

demo: setup-core
	$(VENV)/bin/flowcep demo

test: setup setup-flink setup-pypy
	$(VENV)/bin/python -m pytest -q --ignore=tests/connectors/flink
	$(FLINK_VENV)/bin/python -m pytest -q tests/connectors/flink
	$(MAKE) --no-print-directory test-pypy

# everything but the Spark and PyFlink connectors (their engines run on CPython)
test-pypy: setup-pypy
	$(PYPY_VENV)/bin/python -m pytest -q --ignore=tests/connectors

lint: setup
	$(VENV)/bin/ruff check src tests benchmarks examples
	$(VENV)/bin/mypy src

bench: setup setup-pypy
	$(VENV)/bin/python benchmarks/run.py
