"""One test database per running mutant under mutmut (`make mutation`, docs/testing.md).

mutmut forks a child per mutant and each child runs the selected tests as a new pytest session.
With pytest-django's setup two children would create, migrate and drop the same test database
under each other, and a test failing for that reason counts as a killed mutant. Here the first
session migrates a template database; each session then takes a free slot (a file lock held for
the whole session) and uses that slot's database, cloned from the template the first time
(0.1 s instead of 2 s of migrations) and kept for the next session in the slot: the tests leave
it as they found it (each test runs in a rolled-back transaction or flushes after itself).
Used only when ``MUTANT_UNDER_TEST`` is in the environment (tests/conftest.py).
"""

from __future__ import annotations

import fcntl
import time
from pathlib import Path

import pytest

TEMPLATE = "test_mutmut_template"
LOCKS = Path(__file__).resolve().parent.parent / "var" / "mutmut-db"
SLOTS = 16


def _take_slot() -> tuple[int, object]:
    """A free slot number and its open, locked file (the lock goes with the process)."""
    LOCKS.mkdir(parents=True, exist_ok=True)
    while True:
        for slot in range(SLOTS):
            handle = (LOCKS / f"slot-{slot}.lock").open("w")
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.close()
                continue
            return slot, handle
        time.sleep(0.05)


@pytest.fixture(scope="session")
def django_db_setup(django_test_environment, django_db_blocker):
    from django.core.management import call_command
    from django.db import connection

    if connection.vendor != "postgresql":
        raise RuntimeError("make mutation runs on PostgreSQL (scripts/test.sh)")
    slot, handle = _take_slot()
    name = f"test_mutmut_slot_{slot}"
    dirty = LOCKS / f"slot-{slot}.dirty"  # a session in this slot did not end (a timeout kill)
    with django_db_blocker.unblock():
        with connection._nodb_cursor() as cursor:
            cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name])
            exists = cursor.fetchone() is not None
        if not exists:
            with (LOCKS / "setup.lock").open("w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                connection.settings_dict.setdefault("TEST", {})["NAME"] = TEMPLATE
                # Creates and migrates the template once; later slots find it up to date.
                connection.creation.create_test_db(
                    verbosity=0, autoclobber=True, keepdb=True, serialize=False
                )
                connection.close()
                with connection._nodb_cursor() as cursor:
                    cursor.execute(f'CREATE DATABASE "{name}" TEMPLATE "{TEMPLATE}"')
        connection.settings_dict["NAME"] = name
        if dirty.exists():
            call_command("flush", interactive=False, verbosity=0)
        dirty.touch()
    yield
    with django_db_blocker.unblock():
        connection.close()
    dirty.unlink(missing_ok=True)
    handle.close()  # type: ignore[attr-defined]
