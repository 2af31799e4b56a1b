"""The benchmarks and dev commands are a Django app beside the server (``timeline_bench``): the
checkout installs it, the server wheel leaves it out, and the server runs the same without it."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

from django.conf import settings
from django.core.management import get_commands
from setuptools import find_packages

ROOT = Path(__file__).resolve().parents[2]
SERVER = ("timeline_app", "compaction", "config", "templates", "manage.py")


def test_from_the_checkout_bench_and_setup_demo_come_from_the_bench_app():
    assert "timeline_bench" in settings.INSTALLED_APPS
    commands = get_commands()

    assert commands["bench"] == "timeline_bench"
    assert commands["setup_demo"] == "timeline_bench"
    assert commands["create_api_key"] == "timeline_app"


def test_the_server_wheel_holds_the_server_packages_and_not_the_bench_app():
    found = (tomllib.loads((ROOT / "pyproject.toml").read_text()))["tool"]["setuptools"]["packages"]["find"]
    packages = find_packages(where=ROOT, include=found["include"], exclude=found.get("exclude", ()))

    assert {"timeline_app", "timeline_app.rendering.native", "compaction", "config"} <= set(packages)
    assert not [p for p in packages if p.startswith(("timeline_bench", "tests"))]


def test_without_the_bench_app_the_server_starts_and_lacks_only_its_commands(tmp_path: Path):
    # The server as a wheel installs it: its packages without timeline_bench beside them.
    for name in SERVER:
        (tmp_path / name).symlink_to(ROOT / name)
    script = (
        "import django, importlib.util; django.setup()\n"
        "from django.conf import settings; from django.core.management import call_command, get_commands\n"
        "import config.urls, config.wsgi, config.celery, timeline_app.tasks\n"
        "assert importlib.util.find_spec('timeline_bench') is None\n"
        "assert 'timeline_bench' not in settings.INSTALLED_APPS, settings.INSTALLED_APPS\n"
        "commands = get_commands()\n"
        "assert 'bench' not in commands and 'setup_demo' not in commands, commands\n"
        "assert commands['create_api_key'] == 'timeline_app'\n"
        "call_command('check', fail_level='ERROR')\n"
        "print('server ok')\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        env={
            **env,
            "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT / "clients" / "python")]),
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DATABASE_URL": "sqlite://:memory:",
            "SECRET_KEY": "bench-app-test",
        },
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert result.returncode == 0, result.stdout + result.stderr
    assert "server ok" in result.stdout
