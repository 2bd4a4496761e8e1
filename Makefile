# pentadice: every set-up step lives here (and in pyproject.toml), never by hand.
# Targets are files where they can be, so that a second `make table` neither reinstalls nor solves again.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed
DATA ?= data
# What the tables depend on: a change to any of these solves again (tables of unchanged values are kept).
SOLVER_SOURCES := pentadice/game/rules.py pentadice/game/states.py pentadice/game/dice.py pentadice/tables/table.py \
	pentadice/tables/chunks.py pentadice/tables/moment_files.py pentadice/tables/build.py $(wildcard pentadice/solver/*.py) \
	pentadice/tables/chance_tables.py pentadice/tables/win_tables.py pentadice/players/win.py pentadice/players/prepared.py

.PHONY: play install typecheck test test-quick bench bench-serve table figures lint clean browser messages postgres docs

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# PYTHONWARNINGS: setuptools' banner about editable installs says nothing that concerns this project.
# RUNTIME: what playing and advice need, no more (no test, notebook, cluster or documentation tools); the full
# install (INSTALLED) includes it.
RUNTIME := $(VENV)/.installed-runtime
$(RUNTIME): pyproject.toml | $(BIN)/python
	PYTHONWARNINGS=ignore $(BIN)/python -m pip install --quiet -e .
	touch $@

$(INSTALLED): pyproject.toml | $(BIN)/python
	PYTHONWARNINGS=ignore $(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $@ $(RUNTIME)

# The first game: the package with what playing needs, then a game in the terminal against the computer, the
# advisor's hints on. Penta's values come with the package (nothing is solved first); the chances of winning are
# computed as the game goes. PLAYERS: e.g. PLAYERS="Ana,Bob,cpu".
PLAYERS ?= You,cpu
play: $(RUNTIME)  ## set up what playing needs and start a game of Penta in the terminal (hints on)
	@$(BIN)/pentadice play --players "$(PLAYERS)" --hints
	@echo
	@echo "Next:"
	@echo "  make table                             every table a game reads (the chances, the win player's)"
	@echo "  $(BIN)/pentadice serve              play in the browser: open the address it prints"
	@echo "  $(BIN)/pentadice advise 1 1 3 4 6   the best move for any dice"

install: $(INSTALLED)  ## the package, editable, with test and dev tools (again only when pyproject.toml changed)

# Every table a game of Penta reads (values, second moments, the chances table, the win player's tables), with
# progress bars; the win player's end-game table is written last, so it stands for the whole set.
table: $(DATA)/penta.win-end-4.json  ## solve Penta into data/ with every table its games read (a few minutes)
	@echo
	@echo "Penta is solved. Next:"
	@echo "  $(BIN)/pentadice play --hints       play in the terminal against the computer"
	@echo "  $(BIN)/pentadice serve              play in the browser: open the address it prints"
	@echo "  $(BIN)/pentadice advise 1 1 3 4 6   the best move for any dice"
	@echo "  make docs                            the documentation site, into site/"

$(DATA)/penta.win-end-4.json: $(INSTALLED) $(SOLVER_SOURCES)
	$(BIN)/pentadice solve --rules penta --data $(DATA)

# TEST_WORKERS: pytest-xdist workers, each test file in one of them (its module's cached solves stay in one process),
# the files in the order tests/conftest.py gives them (--no-loadscope-reorder: pytest-xdist would otherwise start the
# files of the most tests first, and a file of two long tests would start last).
# One more than the cores: a worker often waits on a server, a browser or a deadline, and the extra one computes
# meanwhile (on two cores, 3 workers finish the suite sooner than 2 or 4: docs/testing.md).
TEST_WORKERS ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 1) + 1 )))
test: install  ## the whole test suite, slow tests included (one worker per core, and one more), then the 15 slowest
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder --durations=15

# The loop while editing (about a minute on two cores): the rules, the solver on reduced games against the brute
# force, the advisor, the command line and the API in process; the full-size solves (-m slow) left out.
QUICK_TESTS := $(addprefix tests/test_,rules.py bruteforce.py advisor.py explain.py cli_advise.py quick_advice.py \
	kiriki.py bad_input.py play_input.py moves_engine.py engine.py table.py api.py)
test-quick: install  ## the rules, the reduced-game solver, the advisor, the CLI and the API (a minute or so)
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder -m "not slow" $(QUICK_TESTS)

# The documentation site (mkdocs.yml, pages in docs/) into site/: --strict fails on a broken link, a page missing from
# the navigation or an error in a docstring. tests/test_docs_examples.py runs every example of its pages.
# NO_MKDOCS_2_WARNING: Material's banner about its successor, printed at every build, says nothing about these pages.
docs: install  ## the documentation site into site/ (open site/index.html), every link checked
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet --site-dir site

typecheck: install  ## mypy on the public modules (pyproject.toml's [tool.mypy] lists them)
	$(BIN)/mypy

# BENCH_ARGS: e.g. --no-maxi --no-targets --win-games 0 (the long rows skipped), --family-only (the Yatzy family's),
# --no-passes (not the one traversal's rows against the commit before it: benchmarks/bench_passes.py), --no-layout
# (not the layer folders' rows against the commit before them: benchmarks/bench_layout.py), --no-latency (not the
# game latency: set-up from empty, the server's start, games through the API: benchmarks/bench_game_latency.py).
bench: install  ## every figure of the Performance page (fresh processes, empty caches for first runs, medians)
	$(BIN)/python benchmarks/bench_all.py $(BENCH_ARGS)

# The advice API with wrk (repeated and new situations, 1 and 2 workers), then the games API under load (whole games
# played by many clients at once) on SQLite and on a throwaway PostgreSQL cluster (`make postgres` installs it).
bench-serve: install postgres  ## load benchmarks of `pentadice serve`: advice with wrk (installed here when missing), games
	@command -v wrk >/dev/null || { SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq wrk; }
	$(BIN)/python benchmarks/bench_serve.py
	$(BIN)/python benchmarks/bench_games_api.py

figures: install  ## run the notebooks; regenerates notebooks/figures/*.png
	$(BIN)/python notebooks/execute.py

# The browser tests drive Debian's Chromium (tests/test_browser.py); without it they are skipped. Nothing is
# downloaded at test time: Playwright (the Python package) drives this system browser. axe-core (the accessibility
# check tests/test_browser_page.py injects into the page) is the npm package of package.json, at the version of
# package-lock.json, installed into node_modules/ by `npm ci` when missing.
browser:  ## Debian's chromium and fonts (apt-get, as root or with sudo), and axe-core (npm ci), when missing
	@if [ -x /usr/bin/chromium ]; then echo "chromium: /usr/bin/chromium"; else \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core fonts-liberation; fi
	@if [ -f node_modules/axe-core/axe.min.js ]; then echo "axe-core: node_modules/axe-core"; else \
	  npm ci --ignore-scripts --no-audit --no-fund; fi

# The database tests run against a real PostgreSQL server (tests/postgres.py): each test session makes and starts a
# throwaway cluster of its own (as the postgres user when run as root); without the server's binaries they are skipped.
# No cluster is started here: postgresql-common is installed first and told not to create (and start) the usual
# "main" cluster, as the official postgres image does (`pg_createcluster VERSION main --start` makes one if wanted).
postgres:  ## Debian's postgresql for the database tests (apt-get, as root or with sudo), when missing
	@if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then \
	  echo "postgresql: $$(ls -d /usr/lib/postgresql/*/bin/initdb | sort -V | tail -n 1)"; else \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends postgresql-common && \
	  $$SUDO sed -i 's/^#* *create_main_cluster *=.*/create_main_cluster = false/' \
	    /etc/postgresql-common/createcluster.conf && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends postgresql; fi

# The message catalogue (see pentadice/support/i18n.py): the English messages of the code and of the page's t("...")
# extracted, the Indonesian .po brought up to date with them (translate what is new there, then run this again),
# and every .po compiled to the .mo that ships. tests/test_i18n.py fails while a message is missing or untranslated.
LOCALE := pentadice/support/locale
messages: install  ## extract the messages, update the Indonesian catalogue, compile the .mo files
	$(BIN)/pybabel extract --mapping-file $(LOCALE)/babel.cfg --keyword t --no-location --sort-output --no-wrap \
		--project pentadice --copyright-holder "the pentadice authors" --output-file $(LOCALE)/pentadice.pot .
	test -f $(LOCALE)/id/LC_MESSAGES/pentadice.po || \
		$(BIN)/pybabel init --domain pentadice --locale id --input-file $(LOCALE)/pentadice.pot --output-dir $(LOCALE)
	$(BIN)/pybabel update --domain pentadice --input-file $(LOCALE)/pentadice.pot --output-dir $(LOCALE) \
		--no-fuzzy-matching --ignore-obsolete --no-wrap
	$(BIN)/pybabel compile --domain pentadice --directory $(LOCALE) --statistics

lint: install
	$(BIN)/ruff check pentadice tests benchmarks tools notebooks/execute.py
	$(BIN)/ruff format --check pentadice tests benchmarks tools notebooks/execute.py

clean:  ## build leftovers and Numba caches (needed after editing pentadice/game/rules.py: see docs/development.md)
	find pentadice -name __pycache__ -type d -exec rm -rf {} +
