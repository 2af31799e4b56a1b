# The two commands: `make run` (embedded service) and `make test` (the suite on real PostgreSQL and Redis).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test install worker beat lint typecheck schema bench clean

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
	$(PY) manage.py runserver 127.0.0.1:8000

test: $(STAMP)
	bash scripts/test.sh

worker: $(STAMP)
	$(VENV)/bin/celery -A config worker --loglevel=INFO

beat: $(STAMP)
	$(VENV)/bin/celery -A config beat --loglevel=INFO

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: $(STAMP)
	$(VENV)/bin/mypy timeline_app compaction config

schema: $(STAMP)
	$(PY) manage.py spectacular --validate --fail-on-warn --file var/openapi.yaml

bench: $(STAMP)
	$(PY) manage.py bench all

clean:
	rm -rf $(VENV) var .pytest_cache .mypy_cache .ruff_cache
