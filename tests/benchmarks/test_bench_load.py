"""``bench load`` drives a live server over HTTP, and refuses anything but loopback."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from timeline_bench import load


@pytest.mark.parametrize(
    "url", ["http://10.0.0.8:8000", "http://0.0.0.0:8000", "ftp://127.0.0.1/", "http://"]
)
def test_bench_load_refuses_targets_that_are_not_loopback(url, db):
    with pytest.raises(CommandError, match=r"loopback|not an http"):
        call_command("bench", "load", "--url", url)


@pytest.mark.parametrize("url", ["http://127.0.0.1:8000/", "http://localhost:8000", "http://[::1]:8000"])
def test_loopback_targets_are_accepted(url):
    assert load.require_loopback(url) == url.rstrip("/")
