"""The HTTP tour, docs/examples/curl_tour.sh (docs/api.md), runs as written against a live server on
any ``PORT``, twice, with the same answers (times, generated compaction and task ids and durations
aside)."""

from __future__ import annotations

import re
import subprocess

import pytest

from tests.e2e.processes import ROOT
from timeline_app.services.api_keys import api_key_create

pytestmark = pytest.mark.e2e

TOUR_FILE = ROOT / "docs" / "examples" / "curl_tour.sh"
TOUR = TOUR_FILE.read_text()

VOLATILE = [
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)"), "<time>"),
    (re.compile(r"cmp_[0-9a-f]{16}"), "<cmp>"),
    (re.compile(r"rnd_[A-Za-z0-9_-]{22}"), "<render>"),
    (re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), "<uuid>"),
    (re.compile(r'"(duration_ms|summarize_ms)":\d+'), r'"\1":0'),
]


def normalized(output: str) -> str:
    for pattern, replacement in VOLATILE:
        output = pattern.sub(replacement, output)
    return output


def test_the_curl_tour_runs_twice_with_the_same_answers(server, tmp_path):
    assert "PORT" in TOUR and "-X PATCH" in TOUR and "/unhide/" in TOUR and "/compactions/" in TOUR
    _, key = api_key_create(tenant_name="tour")
    port = server.rsplit(":", 1)[1]
    assert "set -eu" in TOUR, "the tour stops at its first failing command"
    env = {"PATH": "/usr/bin:/bin", "KEY": key, "PORT": port}
    outputs = []
    for _ in range(2):
        run = subprocess.run(
            ["bash", str(TOUR_FILE)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
        )
        assert run.returncode == 0, run.stdout + run.stderr
        outputs.append(normalized(run.stdout))
    assert outputs[0] == outputs[1]
    assert '"code"' not in outputs[0], outputs[0]  # no error answer anywhere
    assert outputs[0].rstrip().endswith("204\n204")
