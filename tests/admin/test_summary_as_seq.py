"""A summary is referred to by its seq ("seq N"), the number support sees in the timeline, never
by its database id."""

from __future__ import annotations

import pytest

from tests.admin import urls
from tests.admin.builders import compacted_conversation, contribute_turns
from timeline_app.models import Compaction, Timeline
from timeline_app.services.conversations import conversation_create


@pytest.mark.django_db
def test_compaction_page_names_the_summary_block_by_seq(support, tenant):
    # Blocks of another conversation first, so database ids and seqs differ.
    earlier = conversation_create(tenant=tenant, public_id="earlier")
    contribute_turns(Timeline.objects.get(conversation=earlier), turns=3)
    conversation, timeline = compacted_conversation(tenant)
    compaction = Compaction.objects.select_related("summary_block").get(timeline=timeline)
    summary = compaction.summary_block
    assert summary.pk != summary.seq
    html = support.get(urls.change("compaction", compaction.pk)).content.decode()
    assert f">seq {summary.seq}</a>" in html
    assert f"block {summary.pk}" not in html and f">{summary.pk}</a>" not in html
    page = support.get(urls.conversation(conversation.pk)).content.decode()
    assert f">seq {summary.seq}</a>" in page
