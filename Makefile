# The two commands of the README:
#   make demo   install, then run the main job (align) on the bundled seed fixtures
#   make test   install, then run the whole test suite
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
STAMP   = $(VENV)/.installed

.PHONY: demo test lint fmt typecheck bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/recipe-sync demo --out .demo

test: $(STAMP)
	$(BIN)/python -m pytest -n 2 $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

fmt: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: $(STAMP)
	$(BIN)/python -m bench.render_corpus

clean:
	rm -rf $(VENV) .demo .pytest_cache .mypy_cache .ruff_cache
