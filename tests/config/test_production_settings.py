"""Issue 12 point 17: no public secret key, a clean ``check --deploy`` under the documented
production settings. Each case starts ``manage.py`` in a fresh process: settings are read once."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
POSTGRES = "postgres://timeline:db-pw-123@127.0.0.1:5432/timeline"
# README "Production": the environment the service runs with behind its TLS proxy.
PRODUCTION = {
    "DATABASE_URL": POSTGRES,
    "CELERY_BROKER_URL": "redis://127.0.0.1:6379/0",
    "SECRET_KEY": secrets.token_urlsafe(50),
    "ALLOWED_HOSTS": "timeline.example.org",
    "TIMELINE_BEHIND_TLS_PROXY": "true",
}


def manage(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in {"SECRET_KEY", "DATABASE_URL", "DEBUG"}}
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_with_debug_off_a_missing_secret_key_stops_the_start_with_a_clear_message():
    result = manage("check", DATABASE_URL=POSTGRES)

    assert result.returncode != 0
    assert "SECRET_KEY is not set" in result.stderr


def test_debug_off_in_the_embedded_mode_also_needs_a_secret_key():
    result = manage("check", DEBUG="false")

    assert result.returncode != 0
    assert "SECRET_KEY is not set" in result.stderr


def test_the_embedded_mode_runs_in_debug_with_a_key_of_its_own_not_a_public_one():
    script = "from django.conf import settings; print(settings.DEBUG, settings.SECRET_KEY)"
    first = manage("shell", "-c", script)
    second = manage("shell", "-c", script)

    assert first.returncode == 0, first.stderr
    debug, key = first.stdout.split()[-2:]
    assert debug == "True"
    assert len(key) >= 50 and key == (ROOT / "var" / "secret_key").read_text().strip()
    assert second.stdout.split()[-2:] == [debug, key], "the key is kept across starts"
    assert oct((ROOT / "var" / "secret_key").stat().st_mode & 0o777) == "0o600"


def test_check_deploy_is_clean_under_the_documented_production_settings():
    result = manage("check", "--deploy", "--fail-level", "WARNING", **PRODUCTION)

    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_without_the_tls_proxy_switch_check_deploy_names_what_is_missing():
    plain = {**PRODUCTION, "TIMELINE_BEHIND_TLS_PROXY": "false"}
    result = manage("check", "--deploy", "--fail-level", "WARNING", **plain)

    assert result.returncode != 0
    for check in ("security.W004", "security.W008", "security.W012", "security.W016"):
        assert check in result.stderr


def test_the_admin_login_lockout_is_on_under_production_settings_and_a_bad_policy_stops_the_start():
    script = (
        "from django.conf import settings; "
        "print(settings.AXES_ENABLED, settings.AXES_FAILURE_LIMIT, settings.AXES_COOLOFF_TIME)"
    )
    result = manage("shell", "-c", script, **PRODUCTION)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[-3:] == ["True", "5", "0:15:00"]

    bad = manage("check", **{**PRODUCTION, "AXES_FAILURE_LIMIT": "0"})
    assert bad.returncode != 0
    assert "AXES_FAILURE_LIMIT and AXES_COOLOFF_MINUTES must be at least 1" in bad.stderr
