"""Writes of the sources pool."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import transaction

from timeline_app.models import Source, Timeline
from timeline_app.services.conversations import timeline_lock


def sources_merge(*, timeline: Timeline, sources: Sequence[dict[str, Any]]) -> list[Source]:
    """Merge rows into the sources pool by URL: existing rows keep their ``sid`` (their other fields
    are updated when given), new rows get ``max(sid) + 1`` in request order. Returns the whole pool."""
    with transaction.atomic(savepoint=False):
        timeline_lock(timeline=timeline, fields=("id",))
        pool = {row.url: row for row in Source.objects.filter(timeline=timeline)}
        next_sid = max((row.sid for row in pool.values()), default=0) + 1
        for item in sources:
            row = pool.get(item["url"])
            if row is None:
                row = Source(timeline=timeline, sid=next_sid, url=item["url"])
                next_sid += 1
                pool[row.url] = row
            for name in ("title", "text"):
                if item.get(name) is not None:
                    setattr(row, name, item[name])
            if item.get("meta") is not None:
                row.meta = {**row.meta, **item["meta"]}
            row.save()
    return list(Source.objects.filter(timeline=timeline).order_by("sid"))
