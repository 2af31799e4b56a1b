"""On PostgreSQL an unfiltered list over the threshold reads the planner's estimate from pg_class
and never runs COUNT(*): a populated table whose estimate is stale tells the two answers apart."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from timeline_app.admin.paginator import EstimatedCountPaginator
from timeline_app.models import Tenant

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="the estimate is read from pg_class"),
]


def _populate(count: int, prefix: str) -> None:
    Tenant.objects.bulk_create([Tenant(name=f"{prefix}-{k}") for k in range(count)])


def test_unfiltered_list_over_the_threshold_uses_the_estimate_not_count(monkeypatch):
    _populate(60, "analyzed")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE timeline_app_tenant")
    _populate(9, "after-analyze")  # the estimate is now stale: 60 estimated, 69 real
    assert Tenant.objects.count() == 69
    monkeypatch.setattr(EstimatedCountPaginator, "ESTIMATE_ABOVE", 50)
    with CaptureQueriesContext(connection) as queries:
        count = EstimatedCountPaginator(Tenant.objects.order_by("pk"), 10).count
    assert count == 60
    sql = [q["sql"].upper() for q in queries.captured_queries]
    assert len(sql) == 1 and "PG_CLASS" in sql[0] and "COUNT(" not in sql[0]


def test_under_the_threshold_or_filtered_the_list_is_counted(monkeypatch):
    _populate(60, "analyzed")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE timeline_app_tenant")
    _populate(9, "after-analyze")
    monkeypatch.setattr(EstimatedCountPaginator, "ESTIMATE_ABOVE", 60)  # estimate 60 is not above
    assert EstimatedCountPaginator(Tenant.objects.order_by("pk"), 10).count == 69
    monkeypatch.setattr(EstimatedCountPaginator, "ESTIMATE_ABOVE", 50)
    filtered = Tenant.objects.filter(name__startswith="after").order_by("pk")
    with CaptureQueriesContext(connection) as queries:
        assert EstimatedCountPaginator(filtered, 10).count == 9
    assert ["COUNT(" in q["sql"].upper() for q in queries.captured_queries] == [True]
