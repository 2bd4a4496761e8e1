# pentadice: every set-up step lives here (and in pyproject.toml), never by hand.
# Targets are files where they can be, so that a second `make table` neither reinstalls nor solves again.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed
DATA ?= data
# What the values of a table depend on: a change to any of these solves again.
SOLVER_SOURCES := pentadice/rules.py pentadice/turn.py pentadice/states.py pentadice/dice.py pentadice/table.py \
	$(wildcard pentadice/solver/*.py)

.PHONY: install test bench table figures lint clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# PYTHONWARNINGS: setuptools' banner about editable installs says nothing that concerns this project.
$(INSTALLED): pyproject.toml | $(BIN)/python
	PYTHONWARNINGS=ignore $(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $@

install: $(INSTALLED)  ## the package, editable, with test and dev tools (again only when pyproject.toml changed)

table: $(DATA)/penta.json  ## solve Penta into data/ (the commands' default table directory in a checkout)

$(DATA)/penta.json: $(INSTALLED) $(SOLVER_SOURCES)
	$(BIN)/pentadice solve --rules penta --data $(DATA)

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
