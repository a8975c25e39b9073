# Two commands matter: `make demo` and `make test` (see README).
PY ?= python3
VENV := .venv

.PHONY: setup demo test lint
setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PY) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -e '.[dev]'
	touch $@

demo: setup
	$(VENV)/bin/flowcep demo

test: setup
	$(VENV)/bin/python -m pytest -q

lint: setup
	$(VENV)/bin/ruff check src tests
	$(VENV)/bin/mypy src
