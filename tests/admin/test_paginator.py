"""Unfiltered lists of huge tables use the planner's estimate instead of COUNT(*) (PostgreSQL)."""

from __future__ import annotations

import pytest
from django.db import connection

from timeline_app.admin.paginator import EstimatedCountPaginator
from timeline_app.models import Block, Conversation


@pytest.mark.django_db
def test_small_or_filtered_lists_are_counted_exactly(compacted):
    _, timeline = compacted
    assert EstimatedCountPaginator(Block.objects.order_by("pk"), 10).count == Block.objects.count()
    filtered = Block.objects.filter(timeline=timeline, hidden=True).order_by("pk")
    assert EstimatedCountPaginator(filtered, 10).count == 2


@pytest.mark.django_db
@pytest.mark.skipif(connection.vendor != "postgresql", reason="the estimate is read from pg_class")
def test_unfiltered_huge_list_uses_the_planner_estimate(db, monkeypatch):
    monkeypatch.setattr(EstimatedCountPaginator, "ESTIMATE_ABOVE", -2)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE timeline_app_conversation")
        cursor.execute("SELECT reltuples::bigint FROM pg_class WHERE relname = 'timeline_app_conversation'")
        estimate = cursor.fetchone()[0]
    assert EstimatedCountPaginator(Conversation.objects.order_by("pk"), 10).count == estimate
