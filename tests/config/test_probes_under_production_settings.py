"""Issue 25: under the documented production settings an orchestrator's local probes of
``/healthz`` and ``/metrics`` (plain HTTP, ``Host: <pod IP>:8000`` or ``127.0.0.1:8000``, no
``X-Forwarded-Proto``) are answered, not refused by the host check (400) or redirected to HTTPS;
``/metrics`` keeps its access rule and every other path keeps the host check. Settings are read once
per process, so the requests run in a fresh ``manage.py shell`` with the production environment."""

from __future__ import annotations

import json
import os
import re

from tests.config.test_production_settings import PRODUCTION, manage

# Each probe: (path, Host, client address, extra headers). The script prints one JSON line each.
PROBES = [
    ("/healthz", "10.42.0.17:8000", "10.42.0.1", {}),
    ("/healthz", "127.0.0.1:8000", "127.0.0.1", {}),
    ("/healthz", "timeline.example.org", "10.42.0.1", {}),
    ("/metrics", "127.0.0.1:8000", "127.0.0.1", {}),
    ("/metrics", "10.42.0.17:8000", "10.42.0.99", {}),
    ("/admin/login/", "10.42.0.17:8000", "10.42.0.1", {}),
    ("/api/v1/conversations", "10.42.0.17:8000", "127.0.0.1", {}),
]
SCRIPT = """
import json, sys
from django.test import Client
for path, host, addr, headers in json.loads({probes!r}):
    response = Client(REMOTE_ADDR=addr).get(path, HTTP_HOST=host, **headers)
    print("PROBE " + json.dumps({{"path": path, "host": host, "status": response.status_code,
          "type": response.get("Content-Type", ""), "location": response.get("Location", ""),
          "body": response.content.decode(errors="replace")[:200]}}))
"""


def _database_and_broker() -> dict[str, str]:
    """The suite's throwaway PostgreSQL and Redis (scripts/test.sh) when there are, so /healthz
    can answer 200; elsewhere the documented placeholders (then it answers 503, still no 400)."""
    found = {}
    url = os.environ.get("DATABASE_URL", "")
    if url.startswith("postgres"):
        found["DATABASE_URL"] = re.sub(r"/[^/]*$", "/postgres", url)
    if os.environ.get("TEST_REDIS_URL"):
        found["CELERY_BROKER_URL"] = os.environ["TEST_REDIS_URL"]
    return found


def _probe() -> dict[tuple[str, str], dict]:
    env = {**PRODUCTION, **_database_and_broker()}
    result = manage("shell", "-c", SCRIPT.format(probes=json.dumps(PROBES)), **env)
    assert result.returncode == 0, result.stdout + result.stderr
    rows = [json.loads(line[6:]) for line in result.stdout.splitlines() if line.startswith("PROBE ")]
    return {(row["path"], row["host"]): row for row in rows}


def test_local_probes_are_answered_under_production_settings_and_other_paths_keep_the_host_check():
    seen = _probe()
    healthy = {200, 503} if "CELERY_BROKER_URL" not in _database_and_broker() else {200}
    for host in ("10.42.0.17:8000", "127.0.0.1:8000", "timeline.example.org"):
        row = seen[("/healthz", host)]
        # Neither the host check's 400 nor the HTTPS redirect's 301: /healthz's own answer.
        assert row["status"] in healthy, row
        assert row["type"] == "application/json", row
        assert '"database"' in row["body"] and '"broker"' in row["body"], row
    metrics = seen[("/metrics", "127.0.0.1:8000")]
    assert metrics["status"] == 200 and metrics["type"].startswith("text/plain"), metrics
    assert "timeline_" in metrics["body"] or "# HELP" in metrics["body"], metrics
    # /metrics keeps its rule: with DEBUG off and no token, a client of another host is refused.
    remote = seen[("/metrics", "10.42.0.17:8000")]
    assert remote["status"] == 403 and '"forbidden"' in remote["body"], remote
    # Every other path still goes through the host check.
    assert seen[("/admin/login/", "10.42.0.17:8000")]["status"] == 400
    assert seen[("/api/v1/conversations", "10.42.0.17:8000")]["status"] == 400
