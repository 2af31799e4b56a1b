"""Issue 21: services join the caller's transaction (a caller that fails after them undoes their
writes); ``durable=True`` stays only where a commit must precede slow I/O, and there nesting is
refused before anything is written."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import transaction

from compaction.summary import ExtractiveSummarizer
from tests.factories import add_turn
from tests.services.compaction.helpers import make_timeline
from tests.services.compaction.summarizers import use
from timeline_app.domain.blocks import NOTES
from timeline_app.domain.contributions import NewBlock
from timeline_app.errors import ConversationErased
from timeline_app.models import Block, Compaction, Source, Timeline
from timeline_app.rendering.pipeline import RenderOptions
from timeline_app.selectors.settings import timeline_settings
from timeline_app.services.blocks import blocks_append
from timeline_app.services.compaction import compaction_request, compaction_run
from timeline_app.services.conversations import conversation_delete
from timeline_app.services.hiding import blocks_hide
from timeline_app.services.messages import message_pop, messages_append, parse_messages
from timeline_app.services.render import timeline_render
from timeline_app.services.sources import sources_merge

pytestmark = pytest.mark.django_db


class Counting:
    name, model = "counting", "counting-1"

    def __init__(self) -> None:
        self.calls = 0

    def summarize(self, **kwargs: Any) -> str:
        self.calls += 1
        return ExtractiveSummarizer().summarize(**kwargs)


class CallerFailed(Exception):
    """What the caller raises after the service returned, inside its own transaction."""


def test_blocks_append_joins_the_callers_transaction(timeline):
    with pytest.raises(CallerFailed), transaction.atomic():
        rows = blocks_append(timeline=timeline, blocks=[NewBlock(type=NOTES, text="undone", client_id="n1")])
        assert rows[0].pk is not None
        raise CallerFailed
    assert not Block.objects.filter(timeline=timeline).exists()
    timeline.refresh_from_db()
    assert (timeline.next_seq, timeline.version) == (1, 0)


def test_blocks_hide_joins_the_callers_transaction(timeline):
    blocks_append(timeline=timeline, blocks=[NewBlock(type=NOTES, text="kept", path="notes:a")])
    with pytest.raises(CallerFailed), transaction.atomic():
        hidden = blocks_hide(timeline=timeline, path="notes:a", replacement_text="[gone]")
        assert hidden[0].hidden
        raise CallerFailed
    assert list(Block.objects.filter(timeline=timeline).values_list("hidden", "replacement_text")) == [
        (False, "")
    ]


def test_sources_merge_joins_the_callers_transaction(timeline):
    sources_merge(timeline=timeline, sources=[{"url": "https://a.example", "title": "A"}])
    with pytest.raises(CallerFailed), transaction.atomic():
        sources_merge(
            timeline=timeline,
            sources=[{"url": "https://a.example", "title": "changed"}, {"url": "https://b.example"}],
        )
        raise CallerFailed
    assert list(Source.objects.filter(timeline=timeline).values_list("sid", "url", "title")) == [
        (1, "https://a.example", "A")
    ]


def test_message_pop_of_an_erased_conversation_is_conversation_erased(timeline):
    """It takes the conversation's lock first like every writer (``timeline_lock``): a context
    erased meanwhile is ``ConversationErased``, not a bare ``DoesNotExist`` of its row."""
    messages_append(timeline=timeline, messages=parse_messages([{"role": "user", "content": "hi"}]))
    stale = Timeline.objects.get(pk=timeline.pk)
    conversation_delete(conversation=timeline.conversation)
    with pytest.raises(ConversationErased):
        message_pop(timeline=stale)


# Durable on purpose: these commit before slow I/O (the broker, the summarizer, a compaction the
# render may run), so a caller's transaction around them is refused, and nothing is written.


def test_a_compaction_request_refuses_a_callers_transaction():
    timeline = make_timeline()
    with pytest.raises(RuntimeError, match="durable"), transaction.atomic():
        compaction_request(timeline=timeline, force=True)
    assert not Compaction.objects.exists()


def test_a_compaction_claim_refuses_a_callers_transaction():
    """The claim commits before the summarizer runs; inside a caller's transaction it would not,
    and the caller's locks would be held across the LLM call."""
    timeline = make_timeline()
    for number in range(1, 5):
        add_turn(timeline, number)
    settings = timeline_settings(timeline=timeline)
    with use(Counting()) as summarizer:
        with pytest.raises(RuntimeError, match="durable"), transaction.atomic():
            compaction_run(
                timeline=timeline, settings=settings, trigger=Compaction.Trigger.MANUAL, force=True
            )
        assert summarizer.calls == 0, "refused before the summarizer was paid"
        assert not Compaction.objects.exists()
        # Outside a transaction the same call claims, summarizes and records its outcome.
        outcome = compaction_run(
            timeline=timeline, settings=settings, trigger=Compaction.Trigger.MANUAL, force=True
        )
    assert summarizer.calls >= 1
    assert Compaction.objects.get().pk == outcome.compaction_id


def test_a_render_refuses_a_callers_transaction(timeline):
    with pytest.raises(RuntimeError, match="durable"), transaction.atomic():
        timeline_render(timeline=timeline, options=RenderOptions())
    timeline.refresh_from_db()
    assert timeline.cache_last_touch_at is None
