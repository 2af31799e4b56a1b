"""``manage.py bench cache-cost``: anthropic_messages is billed no worse against the ideal than the
seed format, on a simulated agent run with fan-outs, hides, TTL prunes and compactions."""

import io

import pytest
from django.core.management import call_command

from timeline_app.benchmarks import cache_cost

pytestmark = pytest.mark.django_db


def test_anthropic_messages_costs_no_more_than_the_seed_format_against_the_ideal():
    lines: list[str] = []
    seed_format, native = cache_cost.run(lines.append, seed=3, turns=12, max_tokens=20_000)
    assert (seed_format.format, native.format) == ("anthropic", "anthropic_messages")
    assert seed_format.compactions >= 1 and seed_format.prunes >= 1 and seed_format.hides >= 1
    # Both formats saw the same run.
    assert (native.compactions, native.prunes, native.hides) == (
        seed_format.compactions,
        seed_format.prunes,
        seed_format.hides,
    )
    assert native.read > 0 and seed_format.read > 0
    assert 1.0 <= native.ratio <= seed_format.ratio, lines
    assert lines[-1].endswith(": ok")


def test_the_command_prints_both_formats_and_the_verdict():
    out = io.StringIO()
    call_command("bench", "cache-cost", "--turns", "3", "--max-tokens", "20000", stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("bench cache-cost: seed 0, 3 turns")
    assert [line.split()[0] for line in lines[1:3]] == ["anthropic", "anthropic_messages"]
    assert "vs seed format" in lines[3]
