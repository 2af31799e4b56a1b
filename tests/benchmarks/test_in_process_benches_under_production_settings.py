"""The benchmarks that drive the API in process (``bench quality``, ``bench cost``) run under the
settings ``make serve`` uses: ``ALLOWED_HOSTS`` without Django's ``testserver``, DEBUG off, HTTPS
enforced behind a TLS proxy (issue 30, defect 5: every request was a 400 ``DisallowedHost``)."""

from __future__ import annotations

import pytest
from django.test import override_settings

from timeline_bench import cost, quality
from timeline_bench.common import NoAllowedHost, in_process_base_url, in_process_host

PRODUCTION = {
    "DEBUG": False,
    "ALLOWED_HOSTS": ["timeline.example.com"],
    "SECURE_PROXY_SSL_HEADER": ("HTTP_X_FORWARDED_PROTO", "https"),
    "SECURE_SSL_REDIRECT": True,
}


@pytest.mark.django_db(transaction=True)
def test_bench_quality_plays_its_sessions_under_production_settings():
    with override_settings(**PRODUCTION):
        results = quality.run_sessions(quality.QualityOptions(seed=24, sessions=1, max_turns=4))

    assert len(results) == 1
    assert results[0].compactions >= 1, "the session ran through the API (a 400 plays no turn)"


@pytest.mark.django_db(transaction=True)
def test_bench_cost_runs_its_agent_under_production_settings():
    lines: list[str] = []
    with override_settings(**PRODUCTION):
        cost.run(lines.append, turns=3)
    text = "\n".join(lines)
    assert "disagreement" not in text and "goal >= 99 %: met" in text, text


@pytest.mark.parametrize(
    ("allowed", "host"),
    [
        (["timeline.example.com", "10.0.0.5"], "timeline.example.com"),
        ([".example.com"], "example.com"),  # a subdomain wildcard: the bare domain matches it
        (["*"], "localhost"),
    ],
)
def test_the_in_process_host_is_one_allowed_hosts_accepts(allowed, host):
    with override_settings(ALLOWED_HOSTS=allowed, DEBUG=False):
        assert in_process_host() == host
        assert in_process_base_url() == f"https://{host}"


def test_no_allowed_host_is_a_clear_error():
    with override_settings(ALLOWED_HOSTS=[], DEBUG=False), pytest.raises(NoAllowedHost):
        in_process_host()
    with override_settings(ALLOWED_HOSTS=[], DEBUG=True):
        assert in_process_host() == "localhost"
