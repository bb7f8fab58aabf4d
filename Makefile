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

test: $(STAMP)
	$(BIN)/python -m pytest -q -m "not slow"

test-slow: $(STAMP)
	$(BIN)/python -m pytest -q -m slow

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/python benchmarks/run_all.py

clean:
	rm -rf $(VENV) demo-output .pytest_cache .mypy_cache .ruff_cache
