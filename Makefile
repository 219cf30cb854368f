# The two front-door commands: `make demo` and `make test`. Both create .venv.
# Another interpreter: `make test PYTHON=/path/to/python3.13` uses a venv of its own,
# .venv-3.13 (named by the interpreter's version), so the default .venv is untouched.
PYTHON ?= python3
ifeq ($(origin PYTHON),file)
VENV := .venv
else
VENV := .venv-$(shell $(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])')
endif
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_STAMP := $(VENV)/.demo-installed

.PHONY: demo test test-quick lint golden bench clean
.PHONY: npm-tools fuzz
NPM_STAMP := node_modules/.installed

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,http]'
	touch $(STAMP) $(DEMO_STAMP)

# the demo needs mcpgen and its own dependencies only (no dev or http extras)
$(DEMO_STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e .
	touch $(DEMO_STAMP)

## demo: build the weather example, start its server, call every tool through the generated client
demo: $(DEMO_STAMP)
	$(BIN)/mcpgen build examples/weather/tools.yaml
	$(BIN)/python examples/weather/demo.py

## test: the whole suite (unit, golden, mypy on generated code, interop with the official SDK),
## one pytest-xdist worker per CPU; a test file always runs whole in one worker
test: $(STAMP) npm-tools
	$(BIN)/mcpgen build examples/weather/tools.yaml
	$(BIN)/pytest -q -p no:cacheprovider -n auto --dist loadfile

## test-quick: the subset CI runs under every other interpreter it finds (build, golden,
## runtime, newcomer); `make test-quick PYTHON=python3.13`
QUICK_TESTS := tests/test_workflow_build.py tests/test_golden.py tests/runtime tests/test_newcomer.py
test-quick: $(STAMP)
	$(BIN)/pytest -q -p no:cacheprovider -n auto --dist loadfile $(QUICK_TESTS)

## npm-tools: the npm test tools (MCP conformance suite, MCP Inspector, a Node 22 binary), npm ci from package-lock.json
npm-tools:
	@if command -v npm >/dev/null 2>&1; then \
		$(MAKE) --no-print-directory $(NPM_STAMP); \
	else \
		echo "npm not found: tests/test_conformance.py and tests/test_inspector.py will be skipped"; \
	fi

$(NPM_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund
	touch $(NPM_STAMP)

lint: $(STAMP)
	$(BIN)/ruff check mcpgen runtime tests benchmarks hatch_build.py
	$(BIN)/ruff format --check mcpgen runtime tests benchmarks hatch_build.py
	$(BIN)/mypy mcpgen runtime/mcpgen_runtime

## fuzz: the fuzzers of tests/fuzz at length (20,000 examples each; FUZZ_EXAMPLES=N for another count)
fuzz: $(STAMP)
	HYPOTHESIS_PROFILE=long $(if $(FUZZ_EXAMPLES),MCPGEN_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES)) \
	$(BIN)/pytest -q -p no:cacheprovider -p no:timeout --hypothesis-show-statistics tests/fuzz

## golden: regenerate tests/golden/ on purpose (review the diff before committing)
golden: $(STAMP)
	$(BIN)/python tests/regen_golden.py

## bench: servers, clients and the generator against the SDK, FastMCP and a stdlib floor (not tests)
bench: $(STAMP)
	$(BIN)/pip install --quiet -e '.[bench]'
	$(BIN)/python benchmarks/run.py $(BENCH_ARGS)

clean:
	rm -rf .venv .venv-3.* examples/weather/weather_mcp
