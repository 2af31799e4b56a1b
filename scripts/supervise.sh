# Sourced by scripts/run.sh and scripts/serve.sh: start long-running processes, each in a process
# group of its own, and stop every one of them when any exits, on Ctrl-C, or on SIGTERM (GNU make
# passes a SIGTERM on to the recipe's shell).
#   start NAME COMMAND...   start a process in the background
#   supervise               wait; then stop them all and exit with the first one's status

STOP_TIMEOUT=${STOP_TIMEOUT:-30}
_pids=()
_names=()

start() {
  local name=$1
  shift
  set -m # job control on for the fork: the process leads a process group of its own
  "$@" &
  set +m
  _pids+=("$!")
  _names+=("$name")
  echo "== started $name (pid $!)"
}

_alive() { kill -0 -- "-$1" 2>/dev/null; }

stop_all() {
  trap - INT TERM EXIT
  local i pid deadline
  # The leader first (gunicorn and Celery stop their own children gracefully), then anything left
  # in its group (runserver's autoreloader child), then SIGKILL after STOP_TIMEOUT seconds.
  for pid in "${_pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  deadline=$((SECONDS + STOP_TIMEOUT))
  for i in "${!_pids[@]}"; do
    pid=${_pids[$i]}
    while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.1; done
    kill -TERM -- "-$pid" 2>/dev/null || true
    while _alive "$pid" && ((SECONDS < deadline)); do sleep 0.1; done
    if _alive "$pid"; then
      echo "== ${_names[$i]} did not stop within ${STOP_TIMEOUT}s: killing it" >&2
      kill -KILL -- "-$pid" 2>/dev/null || true
    fi
  done
  wait 2>/dev/null || true
  echo "== stopped: ${_names[*]}"
}

supervise() {
  trap 'echo; echo "== interrupted: stopping"; stop_all; exit 130' INT
  trap 'echo "== terminated: stopping"; stop_all; exit 143' TERM
  trap 'stop_all' EXIT
  local status=0
  wait -n || status=$?
  echo "== a process exited (status $status): stopping the others" >&2
  stop_all
  exit $((status == 0 ? 1 : status))
}
