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
# the development toolchain, pinned: every package of the dev, http and bench extras at the
# version the suite last passed with (pytest, mypy, ruff, the SDK peers, redis-py, …), so a
# fresh clone passes on any day. `make lock` refreshes it from the newest releases.
CONSTRAINTS := requirements/dev-constraints.txt

.PHONY: demo test test-quick lint golden bench clean lock docs
.PHONY: npm-tools fuzz
NPM_STAMP := node_modules/.installed

$(STAMP): pyproject.toml $(CONSTRAINTS)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -c $(CONSTRAINTS) -e '.[dev,http]'
	touch $(STAMP) $(DEMO_STAMP)

# the demo needs mcpgen and its own dependencies only (no dev or http extras)
$(DEMO_STAMP): pyproject.toml $(CONSTRAINTS)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -c $(CONSTRAINTS) -e .
	touch $(DEMO_STAMP)

## demo: build the weather example, start its server, call every tool through the generated client
demo: $(DEMO_STAMP)
	$(BIN)/mcpgen build examples/weather/tools.yaml
	$(BIN)/python examples/weather/demo.py

## test: the whole suite (unit, golden, mypy on generated code, interop with the official SDK),
## one pytest-xdist worker per CPU; a test file always runs whole in one worker. Branch
## coverage of mcpgen and mcpgen_runtime, in the workers and in the Python subprocesses
## the tests start, is measured, combined and reported; below the floor in
## pyproject.toml ([tool.coverage.report] fail_under) the run fails
test: $(STAMP) npm-tools
	$(BIN)/mcpgen build examples/weather/tools.yaml
	$(BIN)/pytest -q -p no:cacheprovider -n auto --dist loadfile --cov --cov-report=term

## test-quick: the subset CI runs under every other interpreter it finds (build, golden,
## runtime, newcomer); `make test-quick PYTHON=python3.13`
# The runtime part is the runtime's own unit tests, file by file (tests/runtime/ also
# holds end-to-end files that run generated servers as subprocesses).
QUICK_TESTS := tests/workflow/test_workflow_build.py \
	tests/generator/render/test_golden.py \
	tests/runtime/auth/test_auth_tokens.py \
	tests/runtime/client/test_client.py \
	tests/runtime/client/test_client_core.py \
	tests/runtime/client/test_client_flows.py \
	tests/runtime/client/test_client_session_flows.py \
	tests/runtime/contract/test_compat.py \
	tests/runtime/http/test_http_identity.py \
	tests/runtime/http/test_uvicorn_internals.py \
	tests/runtime/protocol/test_param_headers.py \
	tests/runtime/ratelimit/test_ratelimit.py \
	tests/runtime/schema/test_formats.py \
	tests/runtime/schema/test_jsonschema.py \
	tests/runtime/schema/test_regex.py \
	tests/runtime/schema/test_schema_suite.py \
	tests/runtime/server/test_server_stateless.py \
	tests/runtime/tasks/test_tasks.py \
	tests/runtime/tasks/test_taskstore.py \
	tests/runtime/test_claims.py \
	tests/runtime/test_layout.py \
	tests/runtime/transport/test_http_transport.py \
	tests/runtime/transport/test_transport.py \
	tests/workflow/test_newcomer.py
test-quick: $(STAMP)
	$(BIN)/pytest -q -p no:cacheprovider -n auto --dist loadfile $(QUICK_TESTS)

## npm-tools: the npm test tools (MCP conformance suite, MCP Inspector, a Node 22 binary), npm ci from package-lock.json
npm-tools:
	@if command -v npm >/dev/null 2>&1; then \
		$(MAKE) --no-print-directory $(NPM_STAMP); \
	else \
		echo "npm not found: tests/interop/test_conformance.py and tests/interop/test_inspector.py will be skipped"; \
	fi

$(NPM_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund
	touch $(NPM_STAMP)

lint: $(STAMP)
	$(BIN)/ruff check mcpgen runtime tests benchmarks hatch_build.py docs/hooks.py
	$(BIN)/ruff format --check mcpgen runtime tests benchmarks hatch_build.py docs/hooks.py
	$(BIN)/mypy mcpgen runtime/mcpgen_runtime docs/hooks.py

## docs: the documentation site (mkdocs.yml: docs/, README.md as its home page) into site/,
## warnings as errors; `$(BIN)/mkdocs serve` previews it at http://127.0.0.1:8000 while you edit.
## NO_MKDOCS_2_WARNING quiets mkdocs-material's banner about MkDocs 2.0 (not a build warning)
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

## fuzz: the fuzzers of tests/fuzz at length (20,000 examples each; FUZZ_EXAMPLES=N for another count)
fuzz: $(STAMP)
	HYPOTHESIS_PROFILE=long $(if $(FUZZ_EXAMPLES),MCPGEN_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES)) \
	$(BIN)/pytest -q -p no:cacheprovider -p no:timeout --hypothesis-show-statistics tests/fuzz

## golden: regenerate tests/golden/ and examples/weather/weather_mcp on purpose (review the diff before committing)
golden: $(STAMP)
	$(BIN)/python tests/regen_golden.py

## bench: servers, clients and the generator against the SDK, FastMCP and a stdlib floor (not tests)
bench: $(STAMP)
	$(BIN)/pip install --quiet -c $(CONSTRAINTS) -e '.[bench]'
	$(BIN)/python benchmarks/run.py $(BENCH_ARGS)

## lock: refresh $(CONSTRAINTS) from the newest releases (a throw-away venv, then pip freeze);
## run `make test` on the result before committing it
LOCK_VENV := .venv-lock
lock:
	rm -rf $(LOCK_VENV)
	$(PYTHON) -m venv $(LOCK_VENV)
	$(LOCK_VENV)/bin/pip install --quiet --upgrade pip
	$(LOCK_VENV)/bin/pip install --quiet -e '.[dev,http,bench,docs]'
	{ echo "# The development toolchain, pinned (\`make lock\` rewrites this file; see Makefile)."; \
	  echo "# Generated by pip freeze under Python $$($(LOCK_VENV)/bin/python -c 'import platform; print(platform.python_version())')."; \
	  $(LOCK_VENV)/bin/pip freeze --exclude-editable | grep -v '^-e ' | LC_ALL=C sort -f; } > $(CONSTRAINTS)
	rm -rf $(LOCK_VENV)
	@echo "wrote $(CONSTRAINTS); now run: make clean test"

clean:
	rm -rf .venv .venv-3.* examples/weather/weather_mcp
