"""``manage.py bench formats`` prints the violations and render times per native format."""

import io

import pytest
from django.core.management import call_command

from timeline_app.benchmarks import formats

pytestmark = pytest.mark.django_db


def test_bench_formats_prints_zero_violations_for_every_format():
    out = io.StringIO()
    call_command("bench", "formats", "--timelines", "40", "--sdk-every", "5", stdout=out)
    lines = out.getvalue().splitlines()
    assert "SDK types checked on 8" in lines[0]
    rows = [line for line in lines if "rule violations" in line]
    assert [row.split()[0] for row in rows] == [
        "anthropic_messages",
        "openai_responses",
        "openai_chat",
        "gemini_contents",
    ]
    assert all("rule violations     0" in row and "SDK type errors     0" in row for row in rows)


def test_bench_formats_counts_a_violation(monkeypatch):
    monkeypatch.setattr(formats, "violations", lambda fmt, request, prefill=False: ["planted"])
    lines: list[str] = []
    formats.run(lines.append, timelines=3, sdk_every=0)
    assert "rule violations     3" in lines[1]
    assert any("planted" in line for line in lines)
