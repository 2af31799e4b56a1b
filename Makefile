# The two commands: `make run` (embedded service) and `make test` (the suite on real PostgreSQL and Redis).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test install worker beat lint typecheck schema bench clean mutation

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	@mkdir -p var
	$(PY) manage.py migrate --noinput
	$(PY) manage.py setup_demo
ifeq ($(strip $(CELERY_BROKER_URL)),)
	$(PY) manage.py runserver 127.0.0.1:8000
else
	@# With a broker: a Celery worker with an embedded beat runs beside the web server and stops with it.
	$(VENV)/bin/celery -A config worker --beat --schedule var/celerybeat-schedule --loglevel=INFO & \
	  trap 'kill $$! 2>/dev/null' EXIT INT TERM; \
	  $(PY) manage.py runserver 127.0.0.1:8000
endif

test: $(STAMP)
	bash scripts/test.sh

worker: $(STAMP)
	$(VENV)/bin/celery -A config worker --loglevel=INFO

beat: $(STAMP)
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
