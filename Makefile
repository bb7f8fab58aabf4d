# dispatchlab: every target creates and fills .venv when it is missing. `demo` needs only
# the runtime dependencies; the other targets add the development ones to the same venv.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
RUNTIME := $(VENV)/.installed
STAMP := $(VENV)/.installed-dev

.PHONY: demo test test-slow lint bench clean

$(RUNTIME): pyproject.toml
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -e .
	@touch $(RUNTIME)

$(STAMP): $(RUNTIME)
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

demo: $(RUNTIME)
	$(BIN)/dispatchlab demo --out demo-output

# the tests run on every core (pytest-xdist, at most 4 workers; tests marked with one
# xdist_group share a worker); the ahead-of-time units build in the background from the start
# (tests/aot_prebuild.py)
PYTEST := $(BIN)/python -m pytest -q -n auto --maxprocesses 4 --dist loadgroup

test: $(STAMP)
	$(PYTEST) -m "not slow"

test-slow: $(STAMP)
	$(PYTEST) -m slow

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/python benchmarks/run_all.py

clean:
	rm -rf $(VENV) demo-output .pytest_cache .mypy_cache .ruff_cache
