"""The beat schedule is declared in settings and names only tasks the worker registers."""

from __future__ import annotations

import inspect

import pytest
from django.conf import settings

from config.celery import app


@pytest.fixture(scope="module")
def registered() -> set[str]:
    app.loader.import_default_modules()  # what a worker does at start: autodiscovers tasks.py
    return set(app.tasks)


def test_the_schedule_is_declared_in_settings_and_read_by_celery():
    assert settings.CELERY_BEAT_SCHEDULE
    assert app.conf.beat_schedule == settings.CELERY_BEAT_SCHEDULE


@pytest.mark.parametrize("name", sorted(settings.CELERY_BEAT_SCHEDULE))
def test_every_beat_entry_names_a_registered_task(name, registered):
    entry = settings.CELERY_BEAT_SCHEDULE[name]
    assert entry["task"] in registered
    task = app.tasks[entry["task"]]
    inspect.signature(task.run).bind(*entry.get("args", ()), **entry.get("kwargs", {}))
    assert float(entry["schedule"]) > 0


def test_the_compaction_tasks_are_registered_under_stable_names(registered):
    assert {"compaction.tasks.compact_timeline", "compaction.tasks.sweep_compactions"} <= registered
