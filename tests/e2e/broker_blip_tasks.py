"""A Celery app for tests/e2e/test_worker_survives_redis_restarts.py: the project's app (its
settings, its broker transport) plus one task that needs no database. It appends its name to the
file ``BLIP_MARKS`` names once it has run."""

from __future__ import annotations

import os
import time

from config.celery import app


@app.task(name="tests.blip.mark")
def mark(name: str, seconds: float = 0.0) -> None:
    time.sleep(seconds)
    with open(os.environ["BLIP_MARKS"], "a", encoding="utf-8") as marks:
        marks.write(name + "\n")
