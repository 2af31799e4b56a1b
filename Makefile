# `make run` (embedded service), `make serve` (production processes) and `make test` (the suite on real
# PostgreSQL and Redis).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# Two installs: RUN_STAMP is what running the service needs (`pip install -e .`: make run, serve,
# worker, beat); STAMP adds the dev toolchain (the `dev` extra: make test, lint, typecheck, ...).
# A dev install covers running too, so it stamps both; a run install leaves STAMP missing, so a
# later `make test` installs the dev extra.
STAMP := $(VENV)/.installed
RUN_STAMP := $(VENV)/.installed-run

.PHONY: run serve test install install-run worker beat lint typecheck schema bench clean mutation

$(RUN_STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@if [ $(STAMP) -nt pyproject.toml ]; then :; else $(PY) -m pip install --quiet -e .; fi
	@touch $(RUN_STAMP)

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
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
	$(VENV)/bin/mypy timeline_app compaction config

schema: $(STAMP)
	$(PY) manage.py spectacular --validate --fail-on-warn --file var/openapi.yaml

bench: $(STAMP)
	$(PY) manage.py bench all

clean:
	rm -rf $(VENV) var .pytest_cache .mypy_cache .ruff_cache

mutation: $(STAMP)
	@mkdir -p var
	bash scripts/mutation.sh
