#!/usr/bin/env bash
# Makes .venv312 (repository root, gitignored): a Python >= 3.12 virtualenv with the pinned packages of
# scripts/py312-requirements.txt (a1-compiler needs Python 3.12; the service stays on 3.11). Used by
# tests/integrations/test_py312.py, so `make test` creates it on a fresh machine; reinstalls when the
# requirements file is newer than the last install. Prints the interpreter's path on its last line.
# Interpreter: $TIMELINE_PYTHON312 if set, else python3.12 / python3.13 on PATH, else pyenv's newest 3.12
# or 3.13. Fails (exit 1, a message saying what to install) when there is none: never skips.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=.venv312
REQS=scripts/py312-requirements.txt
STAMP=$VENV/.installed

usable() { [ -n "$1" ] && [ -x "$1" ] && "$1" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' 2>/dev/null; }

find_python() {
  local candidate
  if [ -n "${TIMELINE_PYTHON312:-}" ]; then
    usable "$TIMELINE_PYTHON312" && { echo "$TIMELINE_PYTHON312"; return; }
    echo "TIMELINE_PYTHON312=$TIMELINE_PYTHON312 is not a Python >= 3.12 interpreter" >&2
    return 1
  fi
  for name in python3.12 python3.13; do
    candidate=$(command -v "$name" 2>/dev/null || true)
    usable "$candidate" && { echo "$candidate"; return; }
  done
  if command -v pyenv >/dev/null 2>&1; then
    for version in 3.12 3.13; do
      candidate="$(pyenv prefix "$version" 2>/dev/null || true)/bin/python"
      usable "$candidate" && { echo "$candidate"; return; }
    done
  fi
  # pyenv's versions, also when pyenv itself is not on PATH (a non-login shell, CI)
  local root
  root=$( (pyenv root 2>/dev/null) || echo "${PYENV_ROOT:-$HOME/.pyenv}")
  for minor in 3.12 3.13; do
    for candidate in $(ls -d "$root"/versions/"$minor"*/bin/python 2>/dev/null | sort -V -r); do
      usable "$candidate" && { echo "$candidate"; return; }
    done
  done
  return 1
}

if [ ! -x "$VENV/bin/python" ]; then
  if ! PY312=$(find_python); then
    cat >&2 <<'MSG'
No Python >= 3.12 found (tried $TIMELINE_PYTHON312, python3.12, python3.13, pyenv 3.12/3.13).
The a1 and LangChain integration tests need one (a1-compiler requires Python >= 3.12). Install it,
e.g. `apt-get install python3.12 python3.12-venv` or `pyenv install 3.12`, or point
TIMELINE_PYTHON312 at an interpreter.
MSG
    exit 1
  fi
  echo "== creating $VENV with $PY312 ($("$PY312" --version 2>&1))" >&2
  "$PY312" -m venv "$VENV"
fi

if [ ! -f "$STAMP" ] || [ "$REQS" -nt "$STAMP" ]; then
  echo "== installing $REQS into $VENV (a few minutes on a fresh machine)" >&2
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$REQS" >&2
  touch "$STAMP"
fi
echo "$PWD/$VENV/bin/python"
