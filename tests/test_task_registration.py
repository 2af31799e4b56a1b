"""A web process (no worker, so no Celery autodiscovery) knows the tasks services enqueue by name."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_a_fresh_web_process_registers_the_compact_task():
    code = (
        "import django; django.setup()\n"
        "from celery import current_app\n"
        "from timeline_app.services.compaction import COMPACT_TASK\n"
        "print(COMPACT_TASK in current_app.tasks)\n"
    )
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "CELERY_BROKER_URL": "redis://127.0.0.1:1/0",  # a broker configured: not eager
        "CELERY_TASK_ALWAYS_EAGER": "false",
    }
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "True"
