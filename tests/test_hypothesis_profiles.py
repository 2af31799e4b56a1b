"""The inner loop's Hypothesis profile (tests/conftest.py) is not flaky on a loaded machine."""

from __future__ import annotations

from hypothesis import HealthCheck, settings


def test_the_dev_profile_does_not_fail_the_too_slow_health_check():
    assert HealthCheck.too_slow in settings.get_profile("dev").suppress_health_check


def test_the_default_profile_keeps_every_health_check():
    assert settings.get_profile("default").suppress_health_check == ()
