"""One test database per mutant under mutmut (`make mutation`, docs/testing.md).

mutmut forks a child per mutant and each child runs the selected tests as a new pytest session.
With pytest-django's setup two children would create, migrate and drop the same test database
under each other, and a test failing for that reason counts as a killed mutant. Here the first
session migrates a template database (under a file lock); every session clones it (about 0.1 s on
PostgreSQL instead of 2 s of migrations) under its own name and drops the clone at the end.
Used only when ``MUTANT_UNDER_TEST`` is in the environment (tests/conftest.py).
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pytest

TEMPLATE = "test_mutmut_template"
LOCK = Path(__file__).resolve().parent.parent / "var" / "mutmut-db.lock"


@pytest.fixture(scope="session")
def django_db_setup(django_test_environment, django_db_blocker):
    from django.db import connection

    if connection.vendor != "postgresql":
        raise RuntimeError("make mutation runs on PostgreSQL (scripts/test.sh)")
    name = f"test_mutmut_{os.getpid()}"
    LOCK.parent.mkdir(exist_ok=True)
    with django_db_blocker.unblock():
        with LOCK.open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            connection.settings_dict.setdefault("TEST", {})["NAME"] = TEMPLATE
            # Creates and migrates the template once; later sessions find it up to date.
            connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=True, serialize=False)
            connection.close()
            with connection._nodb_cursor() as cursor:
                cursor.execute(f'DROP DATABASE IF EXISTS "{name}"')
                cursor.execute(f'CREATE DATABASE "{name}" TEMPLATE "{TEMPLATE}"')
        connection.settings_dict["NAME"] = name
    yield
    with django_db_blocker.unblock():
        connection.close()
        with connection._nodb_cursor() as cursor:
            cursor.execute(f'DROP DATABASE IF EXISTS "{name}"')
