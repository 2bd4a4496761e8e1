# pentadice: every set-up step lives here (and in pyproject.toml), never by hand.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PENTADICE_DATA ?= $(CURDIR)/data
export PENTADICE_DATA

.PHONY: install test bench table figures lint clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

install: $(BIN)/python  ## the package, editable, with test and dev tools
	$(BIN)/python -m pip install --quiet -e ".[dev]"

table: install  ## solve Penta and write its table into $(PENTADICE_DATA)
	$(BIN)/pentadice solve --rules penta

test: install  ## the whole test suite, slow tests included
	$(BIN)/python -m pytest

bench: install  ## solver benchmark (median of several runs, ratio to yatzy-solver)
	$(BIN)/python benchmarks/bench_solve.py
	$(BIN)/python benchmarks/bench_advise.py
	$(BIN)/python benchmarks/bench_simulate.py

figures: install  ## run the notebooks; regenerates notebooks/figures/*.png (shown in the README)
	$(BIN)/python notebooks/execute.py

lint: install
	$(BIN)/ruff check pentadice tests benchmarks notebooks/execute.py
	$(BIN)/ruff format --check pentadice tests benchmarks notebooks/execute.py

clean:  ## build leftovers and Numba caches (needed after editing pentadice/rules.py: see README)
	find pentadice -name __pycache__ -type d -exec rm -rf {} +
