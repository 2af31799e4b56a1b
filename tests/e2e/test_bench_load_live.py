"""``bench load`` against a live server: agents append and render over HTTP."""

from __future__ import annotations

import re

import pytest

from timeline_app.models import Tenant
from timeline_bench import load


@pytest.mark.e2e
def test_bench_load_runs_agents_against_a_live_server(server):
    lines: list[str] = []

    load.run(lines.append, config=load.LoadConfig(url=server, agents=2, blocks=12, max_seconds=60))

    text = "\n".join(lines)
    appends = int(re.search(r"append\s+(\d+) calls", text)[1])
    renders = int(re.search(r"render\s+(\d+) calls", text)[1])
    assert appends == renders >= 2 * 6, text
    assert re.search(r"p50 .* p95 .* p99", text) and "errors 0" in text
    assert "renders that waited for a summary (compacted inline): 0 (0.0%)" in text
    assert re.search(r"database bytes per block: [\d,]+", text)
    assert not Tenant.objects.filter(name__startswith="bench-load-").exists(), "the scratch tenant is gone"
