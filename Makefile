# `make run` (embedded service), `make serve` (production processes) and `make test` (the suite on real
# PostgreSQL and Redis, then the cross-tenant tests again with the database alone: `make test-rls`).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# Two installs: RUN_STAMP is what running the service and the README's steps after it need
# (`pip install -e . -e ./clients/python`: the service, and the Python client, httpx only, that
# docs/examples/client_quickstart.py imports; make run, serve, worker, beat); STAMP adds the dev
# toolchain (the `dev` extra: make test, lint, typecheck, ...).
# A dev install covers running too, so it stamps both; a run install leaves STAMP missing, so a
# later `make test` installs the dev extra.
STAMP := $(VENV)/.installed
RUN_STAMP := $(VENV)/.installed-run

.PHONY: run serve test test-rls test-fast install install-run worker beat lint typecheck schema bench bench-ab clean mutation

$(RUN_STAMP): pyproject.toml clients/python/pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@if [ $(STAMP) -nt pyproject.toml ] && [ $(STAMP) -nt clients/python/pyproject.toml ]; then :; \
		else $(PY) -m pip install --quiet -e . -e ./clients/python; fi
	@touch $(RUN_STAMP)

$(STAMP): pyproject.toml clients/python/pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]' -e './clients/python[mcp,openai-agents]'
	@touch $(STAMP) $(RUN_STAMP)

install: $(STAMP)

install-run: $(RUN_STAMP)

# make run PORT=8001: the port the embedded server listens on (127.0.0.1 only).
PORT ?= 8000

run: $(RUN_STAMP)
	exec env PORT=$(PORT) bash scripts/run.sh

# Production processes on PostgreSQL and Redis from the environment (README "Production").
serve: $(RUN_STAMP)
	exec bash scripts/serve.sh

test: $(STAMP)
	bash scripts/test.sh

# The cross-tenant tests with every tenant filter stripped and every request as a plain role:
# PostgreSQL's row-level security alone keeps tenants apart (docs/testing.md "The database alone").
# `make test` runs the same list as its second pass.
test-rls: $(STAMP)
	TIMELINE_TEST_RLS_ONLY=1 bash scripts/test.sh -q $$(grep -v '^#' scripts/rls_tests.txt)

# The inner loop (docs/testing.md): the pure core and the fast unit tests on an in-memory SQLite
# database, no service started, property tests on fewer examples (Hypothesis profile "dev").
# Under a minute; `make test` stays the gate.
FAST_TESTS := tests/domain tests/rendering tests/compaction tests/test_layering.py tests/services/test_block_values.py \
	tests/services/test_collector_paused.py tests/api/contexts/test_strategies.py tests/client/test_retries.py

test-fast: $(STAMP)
	DATABASE_URL=sqlite://:memory: SECRET_KEY=test-fast HYPOTHESIS_PROFILE=dev \
		$(PY) -m pytest -m "not e2e" -q -p no:cacheprovider $(FAST_TESTS)

worker: $(RUN_STAMP)
	$(VENV)/bin/celery -A config worker --loglevel=INFO

beat: $(RUN_STAMP)
	@mkdir -p var
	$(VENV)/bin/celery -A config beat --schedule var/celerybeat-schedule --loglevel=INFO

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports --no-logo

typecheck: $(STAMP)
	$(VENV)/bin/mypy timeline_app timeline_bench compaction config clients/python/timeline_client

schema: $(STAMP)
	$(PY) manage.py spectacular --validate --fail-on-warn --file var/openapi.yaml

bench: $(STAMP)
	$(PY) manage.py bench all

# The load bench against the previous release and the working tree, both stacks at once on this
# machine (docs/scaling.md "Same-machine A/B"): make bench-ab [BASE=<git rev>] [RUNS=3], with
# DATABASE_URL (PostgreSQL; the role creates two scratch databases) and CELERY_BROKER_URL (Redis).
BASE ?= 48a6a57
RUNS ?= 3
bench-ab: $(STAMP)
	$(PY) manage.py bench load --baseline $(BASE) --runs $(RUNS)

clean:
	rm -rf $(VENV) .venv312 var .pytest_cache .mypy_cache .ruff_cache

mutation: $(STAMP)
	@mkdir -p var
	bash scripts/mutation.sh
