# Sourced by scripts/run.sh and scripts/serve.sh: start long-running processes, each in a process
# group of its own, and stop every one of them on Ctrl-C or on SIGTERM (GNU make passes a SIGTERM
# on to the recipe's shell).
#   start NAME COMMAND...   start a process in the background
#   supervise               wait; when one exits, stop them all and exit with its status (make run)
#   supervise_restarting    wait; restart a process that exits, after a back-off, and keep the
#                           others running (make serve: a worker that died must not take gunicorn
#                           down); stop them all when one keeps failing (it exits again after
#                           RESTART_LIMIT restarts in a row, each within RESTART_STABLE_SECONDS of
#                           its start). The back-off: 1 s, doubling up to RESTART_DELAY_MAX.

STOP_TIMEOUT=${STOP_TIMEOUT:-30}
RESTART_DELAY_MAX=${RESTART_DELAY_MAX:-30}
RESTART_STABLE_SECONDS=${RESTART_STABLE_SECONDS:-60}
RESTART_LIMIT=${RESTART_LIMIT:-10}
_pids=()
_names=()
_started_at=()
_restarts=()
_backoff="" # the pid of a back-off's sleep, while one runs

# Process i's command is kept in the array _cmd_i.
_spawn() {
  local i=$1
  local -n _command="_cmd_$i"
  set -m # job control on for the fork: the process leads a process group of its own
  "${_command[@]}" &
  set +m
  _pids[i]=$!
  _started_at[i]=$SECONDS
  echo "== started ${_names[$i]} (pid $!)"
}

start() {
  local name=$1
  shift
  local i=${#_names[@]}
  _names+=("$name")
  _restarts+=(0)
  _started_at+=(0)
  declare -g -a "_cmd_$i"
  local -n _command="_cmd_$i"
  _command=("$@")
  _spawn "$i"
}

_alive() { kill -0 -- "-$1" 2>/dev/null; }

stop_all() {
  trap - INT TERM EXIT
  local i pid deadline
  if [ -n "$_backoff" ]; then kill "$_backoff" 2>/dev/null || true; fi
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

_on_signals() {
  trap 'echo; echo "== interrupted: stopping"; stop_all; exit 130' INT
  trap 'echo "== terminated: stopping"; stop_all; exit 143' TERM
  trap 'stop_all' EXIT
}

supervise() {
  _on_signals
  local status=0
  wait -n || status=$?
  echo "== a process exited (status $status): stopping the others" >&2
  stop_all
  exit $((status == 0 ? 1 : status))
}

supervise_restarting() {
  _on_signals
  local i pid status lived delay
  while true; do
    pid=""
    status=0
    wait -n -p pid || status=$?
    if [ -z "$pid" ]; then # nothing exited (no child left to wait for): look again in a second
      sleep 1
      continue
    fi
    for i in "${!_pids[@]}"; do
      [ "${_pids[$i]}" = "$pid" ] || continue
      # Anything the process left in its group goes with it before it is started again.
      kill -KILL -- "-$pid" 2>/dev/null || true
      lived=$((SECONDS - _started_at[i]))
      if ((lived >= RESTART_STABLE_SECONDS)); then _restarts[i]=0; fi
      _restarts[i]=$((_restarts[i] + 1))
      if ((_restarts[i] > RESTART_LIMIT)); then
        echo "== ${_names[$i]} exited (status $status) again after ${RESTART_LIMIT} restarts in a row, each within ${RESTART_STABLE_SECONDS}s of its start: stopping the others" >&2
        stop_all
        exit $((status == 0 ? 1 : status))
      fi
      delay=$((1 << (_restarts[i] - 1)))
      ((delay > RESTART_DELAY_MAX)) && delay=$RESTART_DELAY_MAX
      echo "== ${_names[$i]} (pid $pid) exited (status $status) after ${lived}s: restarting it in ${delay}s (restart ${_restarts[$i]})" >&2
      # Interruptible: a Ctrl-C or SIGTERM during the back-off stops everything at once.
      sleep "$delay" &
      _backoff=$!
      wait "$_backoff" || true
      _backoff=""
      _spawn "$i"
    done
  done
}
