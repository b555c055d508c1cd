# Quick start: `make demo` (creates .venv, installs, runs an agents arena) and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip

DEMO_NOTE := mcts above searches 1000 iterations a move (the same games on every run). Against \
the heuristic, 200 games a game (docs/performance.md, The first run), it wins in Slide (0.61), \
Flipology (0.67) and If It Fits (0.75), and is level in Isflak (0.56) and Op Glad IJs (0.50); \
at 50 ms a move it also wins in Isflak (0.78; README, Agents and arena). The 10 games a lineup \
above give wide intervals (95% CI column).

.PHONY: demo test stress playthroughs bench ladder lint docs clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# --no-compile: Python writes the bytecode of the modules a run imports, not pip of every file
$(VENV)/.core: pyproject.toml | $(BIN)/python
	$(PIP) install -q --no-compile -e ".[plot]"
	@touch $@

$(VENV)/.dev: pyproject.toml | $(BIN)/python
	$(PIP) install -q -e ".[dev]"
	@touch $@ $(VENV)/.core

$(VENV)/.bench: pyproject.toml | $(BIN)/python
	$(PIP) install -q -e ".[bench]"
	@touch $@ $(VENV)/.core

# The first run compiles the games' engines, one process per core (a line per game says so;
# cached for later runs). mcts: 1000 iterations a move, the same games on any machine.
demo: $(VENV)/.core
	$(BIN)/python examples/arena.py --game all --agents random,heuristic,mcts \
		--games 10 --plot demo_plots
	@echo "$(DEMO_NOTE)"

test: $(VENV)/.dev
	$(BIN)/ruff check card_envs agents compat examples tests benchmarks
	$(BIN)/python -m pytest -q -n 2 --durations=25

# The long runs (marker `stress`): random play, agents, fuzzing and arenas at 10x CI size.
stress: $(VENV)/.dev
	$(BIN)/python -m pytest -q -n 2 -m stress --durations=20

# Regenerate the golden playthroughs (tests/playthroughs/) after a deliberate behaviour change;
# the game's version must change with it.
playthroughs: $(VENV)/.dev
	$(BIN)/python tests/support/playthrough.py --write

# The throughput table, then each game's batched rate / anchor against the recorded baseline
# (benchmarks/results/baseline_ratios.json; SLOWER = more than 20% below it). After a deliberate
# change, on a quiet machine: $(BIN)/python benchmarks/baseline_ratios.py record $(BENCH_JSON)
BENCH_JSON ?= benchmarks/results/throughput-latest.json
bench: $(VENV)/.bench
	$(BIN)/python benchmarks/throughput.py --json $(BENCH_JSON)
	$(BIN)/python benchmarks/baseline_ratios.py check $(BENCH_JSON)

ladder: $(VENV)/.bench
	$(BIN)/python benchmarks/ladder.py --plots benchmarks/results/ladder_plots

# The documentation site: built into site/ (open site/index.html); broken links fail.
docs: $(VENV)/.docs
	$(BIN)/mkdocs build --strict --site-dir site

$(VENV)/.docs: pyproject.toml | $(BIN)/python
	$(PIP) install -q -e ".[docs]"
	@touch $@

lint: $(VENV)/.dev
	$(BIN)/ruff check card_envs agents compat examples tests benchmarks

clean:
	rm -rf $(VENV) build site *.egg-info .pytest_cache .hypothesis $${HOME}/.cache/card_envs
	find . -name __pycache__ -prune -exec rm -rf {} +
