"""Every time in the admin has one format, in UTC and saying so: ``2026-03-01 09:30:00 UTC``."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone

import pytest

from tests.admin import urls
from timeline_app.admin import display
from timeline_app.models import ApiKey, Block, Compaction, Conversation, Timeline

ONE_FORMAT = re.compile(r"\b\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC\b")
# Django's localized default ("March 1, 2026, 9:30 a.m."), a date without seconds, a raw ISO time.
OTHER_FORMATS = re.compile(
    r"\b(?:Jan|Feb|March|April|May|June|July|Aug|Sept|Oct|Nov|Dec)\.? \d{1,2}, \d{4}"
    r"|\b\d{4}-\d{2}-\d{2} \d{2}:\d{2}(?!:)"
    r"|\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}"
    r"|\b[ap]\.m\."
)


def _times(html: str) -> tuple[list[str], list[str]]:
    return ONE_FORMAT.findall(html), OTHER_FORMATS.findall(html)


def test_the_format_converts_to_utc_and_keeps_unparseable_client_text() -> None:
    moment = datetime(2026, 3, 1, 10, 30, tzinfo=timezone(timedelta(hours=1)))
    assert display.utc(moment) == "2026-03-01 09:30:00 UTC"
    assert display.utc("2026-03-01T10:30:00+01:00") == "2026-03-01 09:30:00 UTC"
    assert display.utc("2026-03-01T09:30:00.123456Z") == "2026-03-01 09:30:00 UTC"
    assert display.utc("yesterday") == "yesterday"
    assert display.utc(None) == "—"


@pytest.mark.django_db
def test_conversation_list_and_page_show_one_format(support, compacted):
    conversation, timeline = compacted
    moment = datetime(2026, 3, 1, 9, 30, tzinfo=UTC)
    Conversation.objects.filter(pk=conversation.pk).update(started_at=moment, last_activity_at=moment)
    Timeline.objects.filter(pk=timeline.pk).update(cache_last_touch_at=moment)
    for url in (urls.changelist("conversation"), urls.conversation(conversation.pk)):
        found, other = _times(support.get(url).content.decode())
        assert "2026-03-01 09:30:00 UTC" in found, url
        assert other == [], (url, other)


@pytest.mark.django_db
def test_block_compaction_and_key_pages_show_one_format(admin_client_, compacted):
    conversation, timeline = compacted
    compaction = Compaction.objects.get(timeline=timeline)
    block = Block.objects.filter(timeline=timeline).exclude(ts="").first()
    key = ApiKey.objects.create(tenant=conversation.tenant, name="ci", prefix="tlk_abc", key_hash="x" * 64)
    pages = [
        urls.changelist("block") + f"?timeline__id__exact={timeline.pk}",
        urls.change("block", block.pk),
        urls.changelist("compaction"),
        urls.change("compaction", compaction.pk),
        urls.changelist("apikey"),
        urls.change("apikey", key.pk),
        urls.changelist("tenant"),
    ]
    for url in pages:
        found, other = _times(admin_client_.get(url).content.decode())
        assert other == [], (url, other)
        if "changelist" not in url and "block" not in url:
            assert found, url
    block_page = admin_client_.get(urls.change("block", block.pk)).content.decode()
    assert display.utc(block.ts) in block_page and display.utc(block.created_at) in block_page
