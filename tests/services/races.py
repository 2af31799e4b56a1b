"""What the tests that race real connections against each other share."""

from __future__ import annotations

import pytest
from django.db import connection

# The marks of a test whose threads race on PostgreSQL's row locks (each thread its own connection,
# so the test database is not wrapped in one transaction).
RACES_ON_ROW_LOCKS = [
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="needs row locks; make test runs it on PostgreSQL"
    ),
    pytest.mark.django_db(transaction=True),
]
