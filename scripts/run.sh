#!/usr/bin/env bash
# make run: the embedded service (DEBUG, SQLite unless DATABASE_URL says otherwise, eager tasks
# unless CELERY_BROKER_URL is set — then a worker with an embedded beat runs beside the server).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
PORT=${PORT:-8000}
export DEBUG=${DEBUG:-true}

mkdir -p var
"$VENV/bin/python" manage.py migrate --noinput
"$VENV/bin/python" manage.py setup_demo --base-url "http://127.0.0.1:$PORT"

# shellcheck source=scripts/supervise.sh
source scripts/supervise.sh
STOP_TIMEOUT=10
if [ -n "${CELERY_BROKER_URL:-}" ]; then
  start worker "$VENV/bin/celery" -A config worker --beat --schedule var/celerybeat-schedule --loglevel=INFO
fi
start server "$VENV/bin/python" manage.py runserver "127.0.0.1:$PORT"
supervise
