#!/usr/bin/env bash
# Runs the whole suite against a throwaway PostgreSQL and Redis on loopback, then the cross-tenant
# tests again with the database alone holding the line (scripts/rls_tests.txt); with arguments,
# pytest with those arguments only.
# Installs the server packages (and Chromium for the admin browser test) when they are missing, and
# makes .venv312 (scripts/py312_env.sh) for the a1 and LangChain tests.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python

need=()
ls -d /usr/lib/postgresql/*/bin >/dev/null 2>&1 || need+=(postgresql)
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v chromedriver >/dev/null 2>&1 || need+=(chromium-driver)
# The TypeScript client's suite (tests/e2e/test_typescript_client.py) needs Node 20 and npm.
command -v npm >/dev/null 2>&1 || need+=(nodejs npm)
if [ ${#need[@]} -gt 0 ]; then
  echo "== installing ${need[*]} (apt-get)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

PG_BIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
WORK=$(mktemp -d /tmp/timeline-test.XXXXXX)
chmod 755 "$WORK"
free_port() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'; }
PG_PORT=$(free_port)
REDIS_PORT=$(free_port)

as_pg() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
if [ "$(id -u)" = 0 ]; then
  id postgres >/dev/null 2>&1 || useradd --system --home-dir /var/lib/postgresql postgres
  mkdir -p "$WORK/pg" && chown postgres "$WORK/pg"
else
  mkdir -p "$WORK/pg"
fi

cleanup() {
  as_pg "$PG_BIN/pg_ctl" -D "$WORK/pg/data" -m immediate stop >/dev/null 2>&1 || true
  redis-cli -p "$REDIS_PORT" shutdown nosave >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

echo "== starting PostgreSQL on 127.0.0.1:$PG_PORT and Redis on 127.0.0.1:$REDIS_PORT (data in $WORK)"
as_pg "$PG_BIN/initdb" -D "$WORK/pg/data" -U postgres --auth=trust -E UTF8 >/dev/null
PG_OPTS="-c listen_addresses=127.0.0.1 -p $PG_PORT -k $WORK/pg -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
as_pg "$PG_BIN/pg_ctl" -D "$WORK/pg/data" -l "$WORK/pg/log" -w -o "$PG_OPTS" start >/dev/null
REDIS_ARGS="--port $REDIS_PORT --bind 127.0.0.1 --save '' --appendonly no --daemonize yes --dir $WORK --logfile $WORK/redis.log"
eval redis-server "$REDIS_ARGS"

export DATABASE_URL="postgres://postgres@127.0.0.1:$PG_PORT/timeline"
export TEST_REDIS_URL="redis://127.0.0.1:$REDIS_PORT/0"
export TIMELINE_REQUIRE_POSTGRES=1
export SECRET_KEY=test-secret
# The chaos test (tests/e2e/test_chaos.py) stops and starts these PostgreSQL and Redis servers
# itself, the same way as above: pg_ctl (as TIMELINE_TEST_PG_USER when set) and redis-server.
export TIMELINE_TEST_PG_CTL="$PG_BIN/pg_ctl" TIMELINE_TEST_PGDATA="$WORK/pg/data" TIMELINE_TEST_PG_LOG="$WORK/pg/log"
export TIMELINE_TEST_PG_OPTS="$PG_OPTS" TIMELINE_TEST_PG_USER=""
if [ "$(id -u)" = 0 ]; then TIMELINE_TEST_PG_USER=postgres; fi
export TIMELINE_TEST_REDIS_PORT="$REDIS_PORT" TIMELINE_TEST_REDIS_ARGS="$REDIS_ARGS"
"$PG_BIN/psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -Atc 'select version()'
"$PG_BIN/psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -qc 'create database timeline' >/dev/null
redis-cli -p "$REDIS_PORT" info server | grep redis_version

if [ "${TIMELINE_SKIP_CHECKS:-0}" != 1 ]; then
  echo "== checks"
  .venv/bin/ruff check .
  .venv/bin/ruff format --check .
  .venv/bin/lint-imports --no-logo
  .venv/bin/mypy timeline_app timeline_bench compaction config clients/python/timeline_client
  .venv/bin/python manage.py makemigrations --check --dry-run >/dev/null
  .venv/bin/python manage.py spectacular --validate --fail-on-warn --file "$WORK/openapi.yaml"
fi

if [ "$#" = 0 ] || printf '%s\n' "$@" | grep -q 'py312\|tests/integrations/\?$\|^tests/\?$'; then
  # The a1 and LangChain tests (tests/integrations/test_py312.py) run in a Python 3.12 virtualenv:
  # made (or brought up to date) here, so a machine without Python >= 3.12 fails now, with the
  # script's message, never by skipping.
  echo "== .venv312 (Python 3.12: the a1 and LangChain integrations)"
  bash scripts/py312_env.sh >/dev/null
fi

set +e
if [ -n "${TIMELINE_RUN:-}" ]; then
  # Another command against the same throwaway services (make mutation).
  echo "== $TIMELINE_RUN"
  bash -c "$TIMELINE_RUN"
  exit $?
fi
echo "== pytest"
.venv/bin/python -m pytest "$@"
status=$?
if [ "$#" = 0 ]; then
  # The whole suite (make test): a second pass over the cross-tenant tests with the database alone
  # holding the line (docs/testing.md "The database alone"; the list: scripts/rls_tests.txt).
  echo "== pytest, second pass: the cross-tenant tests with every tenant filter stripped (TIMELINE_TEST_RLS_ONLY=1)"
  mapfile -t rls_tests < <(grep -v '^#' scripts/rls_tests.txt)
  TIMELINE_TEST_RLS_ONLY=1 .venv/bin/python -m pytest -q "${rls_tests[@]}"
  rls_status=$?
  if [ "$status" = 0 ]; then status=$rls_status; fi
fi
set -e
if [ "$status" = 5 ]; then
  echo "pytest collected no tests: failing" >&2
  exit 1
fi
exit "$status"
