#!/usr/bin/env bash
# make serve: the production processes on the real components (README "Production") — gunicorn
# serving config.wsgi, one Celery worker, Celery beat — on PostgreSQL and Redis from the
# environment. A process that exits is started again after a back-off (1 s, doubling up to
# RESTART_DELAY_MAX) with a log line, and the others keep running (scripts/supervise.sh). Under a
# supervisor run each process on its own instead (deploy/).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}

missing=()
case "${DATABASE_URL:-}" in
  postgres://* | postgresql://* | pgsql://*) ;;
  *) missing+=("DATABASE_URL (PostgreSQL, e.g. postgres://timeline:PASSWORD@127.0.0.1:5432/timeline)") ;;
esac
case "${CELERY_BROKER_URL:-}" in
  redis://* | rediss://*) ;;
  *) missing+=("CELERY_BROKER_URL (Redis, e.g. redis://127.0.0.1:6379/0)") ;;
esac
[ -n "${SECRET_KEY:-}" ] || missing+=("SECRET_KEY (e.g. \$(python3 -c 'import secrets; print(secrets.token_urlsafe(50))'))")
if [ ${#missing[@]} -gt 0 ]; then
  echo "make serve needs these environment variables (README \"Production\"):" >&2
  printf '  %s\n' "${missing[@]}" >&2
  exit 2
fi

export DEBUG=false
export CELERY_TASK_ALWAYS_EAGER=false
export STATIC_ROOT=${STATIC_ROOT:-$PWD/var/static}
# Several gunicorn workers and the Celery worker write their metrics here; /metrics adds them up.
export PROMETHEUS_MULTIPROC_DIR=${PROMETHEUS_MULTIPROC_DIR:-$PWD/var/prometheus}
rm -rf "$PROMETHEUS_MULTIPROC_DIR"
mkdir -p "$PROMETHEUS_MULTIPROC_DIR" var

"$VENV/bin/python" manage.py check --deploy --fail-level ERROR
"$VENV/bin/python" manage.py migrate --noinput
"$VENV/bin/python" manage.py collectstatic --noinput --verbosity 0

# shellcheck source=scripts/supervise.sh
source scripts/supervise.sh
start gunicorn "$VENV/bin/gunicorn" -c config/gunicorn.py config.wsgi
start worker "$VENV/bin/celery" -A config worker --loglevel=INFO --concurrency "${CELERY_WORKER_CONCURRENCY:-2}"
start beat "$VENV/bin/celery" -A config beat --loglevel=INFO --schedule var/celerybeat-schedule
supervise_restarting
