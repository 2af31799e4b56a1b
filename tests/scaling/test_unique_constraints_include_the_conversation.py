"""Every unique constraint below a conversation includes the conversation (issue 26, migration
0017, docs/scaling.md "Unique constraints and the shard key"): sharded by conversation, the
database can only enforce those. Each still refuses what it refused before; the same key in
another conversation is allowed (as it always was, but for a render's public id: unique per
conversation now)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from django.db import IntegrityError, connection, models, transaction

from tests.factories import TimelineFactory
from timeline_app.models import Block, Compaction, RenderRecord, RenderUsage, Source, Timeline

pytestmark = pytest.mark.django_db

BELOW_A_CONVERSATION = [Timeline, Block, Compaction, RenderRecord, RenderUsage, Source]
NOW = datetime(2026, 11, 1, tzinfo=UTC)


@pytest.mark.parametrize("model", BELOW_A_CONVERSATION, ids=lambda m: m.__name__)
def test_every_unique_constraint_in_the_database_includes_the_conversation(model):
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, model._meta.db_table)
    unique = {
        name: info["columns"]
        for name, info in constraints.items()
        if info["unique"] and not info["primary_key"]
    }
    assert unique, "the table has unique constraints to check"
    assert {name: cols for name, cols in unique.items() if "conversation_id" not in cols} == {}


@pytest.mark.parametrize("model", BELOW_A_CONVERSATION, ids=lambda m: m.__name__)
def test_every_unique_rule_of_the_model_includes_the_conversation(model):
    fields = [f.name for f in model._meta.concrete_fields if f.unique and not f.primary_key]
    assert fields == [], "unique=True (a one-to-one field too) is unique without the conversation"
    rules = [c for c in model._meta.constraints if isinstance(c, models.UniqueConstraint)]
    assert rules and all("conversation" in c.fields for c in rules)


@pytest.fixture
def pair():
    """Two timelines in two conversations (of two tenants)."""
    return TimelineFactory(), TimelineFactory()


def refused(create: Any) -> None:
    with pytest.raises(IntegrityError), transaction.atomic():
        create()


def block(timeline: Timeline, seq: int, **fields: Any) -> Block:
    return Block.objects.create(timeline=timeline, seq=seq, type="message.user", **fields)


def compaction(timeline: Timeline, **fields: Any) -> Compaction:
    fields.setdefault("status", Compaction.Status.APPLIED)
    return Compaction.objects.create(timeline=timeline, trigger="manual", started_at=NOW, **fields)


def render(timeline: Timeline, public_id: str) -> RenderRecord:
    return RenderRecord.objects.create(
        timeline=timeline,
        public_id=public_id,
        rendered_at=NOW,
        reason="first_render",
        pruning_status="fresh",
        settings_key="k",
    )


def usage(timeline: Timeline, render_public_id: str, record: RenderRecord | None = None) -> RenderUsage:
    counts = dict.fromkeys(
        ("uncached_input_tokens", "cache_read_tokens", "cache_write_5m_tokens", "cache_write_1h_tokens"), 0
    )
    return RenderUsage.objects.create(
        tenant_id=timeline.tenant_id,
        conversation_id=timeline.conversation_id,
        timeline=timeline,
        render=record,
        render_public_id=render_public_id,
        rendered_at=NOW,
        reported_at=NOW,
        provider="anthropic",
        model="m",
        output_tokens=0,
        **counts,
    )


def test_a_block_seq_is_unique_in_its_timeline(pair):
    a, b = pair
    block(a, 7)
    refused(lambda: block(a, 7))
    assert block(b, 7).conversation_id == b.conversation_id


def test_a_block_client_id_is_unique_in_its_timeline(pair):
    a, b = pair
    block(a, 1, client_id="x")
    refused(lambda: block(a, 2, client_id="x"))
    block(b, 1, client_id="x")
    block(a, 3)  # no client id: not part of the rule
    block(a, 4)


def test_one_running_compaction_per_timeline(pair):
    a, b = pair
    compaction(a, status=Compaction.Status.RUNNING)
    refused(lambda: compaction(a, status=Compaction.Status.RUNNING))
    compaction(b, status=Compaction.Status.RUNNING)
    compaction(a)  # applied ones are not claims


def test_a_compaction_public_id_is_unique_in_its_timeline(pair):
    a, b = pair
    compaction(a, public_id="cmp_same")
    refused(lambda: compaction(a, public_id="cmp_same"))
    compaction(b, public_id="cmp_same")


def test_a_summary_block_belongs_to_one_compaction(pair):
    a, b = pair
    summary_a, summary_b = block(a, 1), block(b, 1)
    compaction(a, summary_block=summary_a)
    refused(lambda: compaction(a, summary_block=summary_a))
    compaction(b, summary_block=summary_b)


def test_a_render_public_id_is_unique_in_its_conversation(pair):
    a, b = pair
    render(a, "rnd_same")
    refused(lambda: render(a, "rnd_same"))
    other_context = Timeline.objects.create(conversation=a.conversation, name="other")
    refused(lambda: render(other_context, "rnd_same"))
    render(b, "rnd_same")  # another conversation: ids are random, lookups name the context


def test_a_render_is_reported_once(pair):
    a, b = pair
    record_a, record_b = render(a, "rnd_a"), render(b, "rnd_b")
    usage(a, "rnd_a", record_a)
    refused(lambda: usage(a, "rnd_a", record_a))
    refused(lambda: usage(a, "rnd_other", record_a))
    usage(b, "rnd_a")
    usage(b, "rnd_b", record_b)


def test_a_source_sid_and_url_are_unique_in_their_timeline(pair):
    a, b = pair
    Source.objects.create(timeline=a, sid=1, url="https://x")
    refused(lambda: Source.objects.create(timeline=a, sid=1, url="https://y"))
    refused(lambda: Source.objects.create(timeline=a, sid=2, url="https://x"))
    Source.objects.create(timeline=b, sid=1, url="https://x")


def test_a_context_name_is_unique_in_its_conversation(pair):
    a, b = pair
    Timeline.objects.create(conversation=a.conversation, name="notes")
    refused(lambda: Timeline.objects.create(conversation=a.conversation, name="notes"))
    Timeline.objects.create(conversation=b.conversation, name="notes")
