"""``manage.py bench formats`` prints the violations and render times per native format."""

import io

import pytest
from django.core.management import call_command

from timeline_bench import formats

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


def test_bench_formats_renders_the_openai_formats_for_a_gpt_5_6_model_about_half_of_the_time():
    lines: list[str] = []
    formats.run(lines.append, timelines=40, sdk_every=0)
    shown = {row.split()[0]: lines[i + 1] for i, row in enumerate(lines) if "rule violations" in row}
    for fmt in ("openai_responses", "openai_chat"):
        count = int(shown[fmt].split("GPT-5.6 (prompt_cache_options) ")[1].split(";")[0])
        assert 10 <= count <= 30, shown[fmt]
    for fmt in ("anthropic_messages", "gemini_contents"):
        assert "GPT-5.6" not in shown[fmt]
        assert "continue_text" in shown[fmt] and "user" in shown[fmt], shown[fmt]
