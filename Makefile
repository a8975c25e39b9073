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
	$(VENV)/bin/pip install $(PIP_FLAGS) -e '.[dev,spark,frames,metrics]'
	touch $(VENV)/.core $@

# PyFlink 2.3 and its pinned dependencies live apart from pyspark's.
$(FLINK_VENV)/.installed: pyproject.toml
	test -d $(FLINK_VENV) || $(PY) -m venv $(FLINK_VENV)
	$(FLINK_VENV)/bin/pip install $(PIP_FLAGS) 'apache-flink==2.3.0'
	$(FLINK_VENV)/bin/pip install $(PIP_FLAGS) -e '.[test]'
	touch $@

# PyPy runs the embedded runtime about 3x faster than CPython (docs/runtime.md section 8); Debian 12
# ships PyPy 7.3.11 (Python 3.9), installed here when it is missing (root, or sudo without a password).
# Where it cannot be installed (no apt, no root, no such sudo), the PyPy steps are skipped with a
# message that says how to get it, and everything else runs; under CI=true that is an error instead.
PYPY_HOWTO := install PyPy 3.9 or later (Debian/Ubuntu: sudo apt-get install pypy3; elsewhere https://pypy.org/download.html), then run make setup-pypy, or make setup-pypy PYPY=/path/to/pypy3
define INSTALL_PYPY
{ SUDO=$$(test "$$(id -u)" = 0 || echo sudo -n); export DEBIAN_FRONTEND=noninteractive; \
  $$SUDO apt-get install -y -q pypy3 || { $$SUDO apt-get update -q && $$SUDO apt-get install -y -q pypy3; }; }
endef

# one shell: the venv is made only when PyPy is there (no recursive make: `make -n` runs nothing)
$(PYPY_VENV)/.installed: pyproject.toml
	@if command -v $(PYPY) >/dev/null || { $(INSTALL_PYPY) && command -v $(PYPY) >/dev/null; }; then \
		set -ex; \
		test -d $(PYPY_VENV) || $(PYPY) -m venv $(PYPY_VENV); \
		$(PYPY_VENV)/bin/pip install $(PIP_FLAGS) -e '.[test,metrics]'; \
		touch $@; \
	elif [ "$(CI)" = true ]; then \
		echo "make: error: PyPy ($(PYPY)) is missing and could not be installed; CI=true needs it: $(PYPY_HOWTO)" >&2; \
		exit 1; \
	else \
		echo "make: skipping PyPy: $(PYPY) is missing and could not be installed here (apt-get as root, or sudo without a password). To get it: $(PYPY_HOWTO)" >&2; \
	fi

demo: setup-core
	$(VENV)/bin/flowcep demo

test: setup setup-flink setup-pypy
	$(VENV)/bin/python -m pytest -q --ignore=tests/connectors/flink
	$(FLINK_VENV)/bin/python -m pytest -q tests/connectors/flink
	$(MAKE) --no-print-directory test-pypy

# everything but the Spark and PyFlink connectors (their engines run on CPython); skipped without
# PyPy (setup-pypy said why; under CI=true it failed instead)
test-pypy: setup-pypy
	@if [ -f $(PYPY_VENV)/.installed ]; then \
		set -x; $(PYPY_VENV)/bin/python -m pytest -q --ignore=tests/connectors; \
	else \
		echo "make: skipped the tests on PyPy: no PyPy (see above)" >&2; \
	fi

lint: setup
	$(VENV)/bin/ruff check src tests benchmarks examples
	$(VENV)/bin/ruff format --check src tests benchmarks examples
	$(VENV)/bin/mypy src
	$(VENV)/bin/mypy --strict --follow-imports=silent src/flowcep/pattern src/flowcep/nfa src/flowcep/sharedbuffer

bench: setup setup-pypy
	$(VENV)/bin/python benchmarks/run.py
