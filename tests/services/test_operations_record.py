"""The operations log's one write (``services.operations.operation_record``): bounded per context at
write time like the render history, in the transaction of the change it records, and the
compaction outcomes a render or the worker reach, with the numbers that decided them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from tests.factories import add_turns, fill_to
from tests.services.compaction.helpers import make_timeline
from tests.services.compaction.summarizers import use
from timeline_app import metrics
from timeline_app.domain.operations import HIDDEN
from timeline_app.models import Block, Compaction, Operation, Timeline
from timeline_app.rendering.pipeline import RenderOptions
from timeline_app.services import hiding
from timeline_app.services import render as render_services
from timeline_app.services.compaction import compaction_run
from timeline_app.services.compaction import summary as summarizer_services
from timeline_app.services.contexts import context_create
from timeline_app.services.conversations import conversation_create
from timeline_app.services.hiding import blocks_hide
from timeline_app.services.operations import acting_as, operation_record
from timeline_app.services.render import timeline_render
from timeline_app.tasks import compact_timeline

pytestmark = pytest.mark.django_db


def logged(timeline: Timeline) -> list[tuple[str, list[list[int]]]]:
    """The context's entries, oldest first: kind and seq ranges."""
    return [
        (kind, ranges)
        for kind, ranges in Operation.objects.filter(timeline=timeline)
        .order_by("id")
        .values_list("kind", "seq_ranges")
    ]


def record(timeline: Timeline, n: int) -> None:
    with transaction.atomic():
        operation_record(timeline=timeline, kind=HIDDEN, seqs=[n])


@pytest.mark.parametrize("cap", [1, 3])
def test_the_log_holds_exactly_the_cap_and_trims_the_oldest_first(settings, timeline, make_caller, cap):
    settings.TIMELINE_OPERATIONS_LOG_MAX = cap
    Operation.objects.filter(timeline=timeline).delete()  # the fixture's context_created
    sibling = context_create(conversation=timeline.conversation, name="attempt_a")
    foreign = conversation_create(tenant=make_caller("globex").tenant, public_id="c1").timelines.get()
    before = {t.pk: logged(t) for t in (sibling, foreign)}
    for n in range(1, cap + 1):
        record(timeline, n)
    assert [seqs for _, seqs in logged(timeline)] == [[[n, n]] for n in range(1, cap + 1)], "at the cap: all"
    record(timeline, cap + 1)
    assert [seqs for _, seqs in logged(timeline)] == [[[n, n]] for n in range(2, cap + 2)], (
        "one past: oldest out"
    )
    record(timeline, cap + 2)
    assert Operation.objects.filter(timeline=timeline).count() == cap
    assert {t.pk: logged(t) for t in (sibling, foreign)} == before, "only its own context is trimmed"


@pytest.mark.parametrize("cap", [1, 3])
def test_trimming_one_context_at_the_cap_never_deletes_anothers_entries(settings, timeline, cap):
    """Two contexts of one conversation, each at the cap, the second's entries all newer: one more
    entry on either trims its own oldest only, never the other's (the delete and the cutoff both
    filter by context: the newer one's extra catches a lost delete filter, the older one's a lost
    cutoff filter)."""
    settings.TIMELINE_OPERATIONS_LOG_MAX = cap
    first = timeline
    second = context_create(conversation=timeline.conversation, name="attempt_a")
    Operation.objects.filter(timeline__in=[first, second]).delete()  # their context_created
    for n in range(1, cap + 1):
        record(first, n)
    for n in range(1, cap + 1):
        record(second, 100 + n)
    before = logged(first)
    assert len(before) == cap and len(logged(second)) == cap

    record(second, 100 + cap + 1)

    assert logged(first) == before, "the other context keeps all its entries"
    after = [[[n, n]] for n in range(102, 100 + cap + 2)]
    assert [seqs for _, seqs in logged(second)] == after, "its own oldest out, no more"

    record(first, cap + 1)  # now the older context: the cutoff is taken among its own entries only

    assert [seqs for _, seqs in logged(first)] == [[[n, n]] for n in range(2, cap + 2)]
    assert [seqs for _, seqs in logged(second)] == after


def test_a_change_that_fails_after_its_entry_leaves_neither(timeline, monkeypatch):
    """Same transaction: the hide's blocks and its entry commit together or not at all."""
    add_turns(timeline, 2)
    path = "tc:turn_1.tc_1x0.result"
    count = Operation.objects.count()

    def record_then_fail(**kwargs: Any) -> None:
        operation_record(**kwargs)
        assert Operation.objects.count() == count + 1  # written, inside the hide's transaction
        raise RuntimeError("the change fails after its entry")

    monkeypatch.setattr(hiding, "operation_record", record_then_fail)
    with pytest.raises(RuntimeError), transaction.atomic():  # the API view's (durable) transaction
        blocks_hide(timeline=timeline, path=path, replacement_text="x")
    assert Operation.objects.count() == count
    assert not Block.objects.get(timeline=timeline, path=path).hidden


def test_a_prune_whose_hides_fail_leaves_no_entry(timeline, monkeypatch):
    """The render's prune transaction: its hides and its entry commit together or not at all."""
    timeline.conversation.settings = {"ttl_keep_recent_turns": 2}
    timeline.conversation.save()
    add_turns(timeline, 4)
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    timeline_render(timeline=timeline, options=RenderOptions(), now=t0)
    real = render_services.operation_record

    def record_then_fail(**kwargs: Any) -> None:
        real(**kwargs)
        raise RuntimeError("the prune fails after its entry")

    monkeypatch.setattr(render_services, "operation_record", record_then_fail)
    with pytest.raises(RuntimeError):
        timeline_render(timeline=timeline, options=RenderOptions(), now=t0 + timedelta(hours=1))
    assert not Operation.objects.filter(timeline=timeline, kind="ttl_pruned").exists()
    assert not Block.objects.filter(timeline=timeline, hidden=True).exists()
    monkeypatch.setattr(render_services, "operation_record", real)
    timeline_render(timeline=timeline, options=RenderOptions(), now=t0 + timedelta(hours=1))
    assert Operation.objects.filter(timeline=timeline, kind="ttl_pruned").count() == 1


def test_an_apply_that_fails_after_its_entry_rolls_the_entry_back_with_the_summary(monkeypatch):
    timeline = make_timeline()
    fill_to(timeline, 3_800, 4_500)

    def broken(**kwargs: Any) -> None:
        raise RuntimeError("metrics down")

    monkeypatch.setattr(metrics, "observe_compaction", broken)
    with pytest.raises(RuntimeError):
        compact_timeline(timeline.pk)
    assert not Block.objects.filter(timeline=timeline, type="conv.range.summary").exists()
    assert not Operation.objects.filter(timeline=timeline, kind="compaction_applied").exists()
    # The claim is released as failed, and that is in the log (written with the release).
    failed = Operation.objects.get(timeline=timeline, kind="compaction_failed")
    assert failed.details["reason"] == "RuntimeError: metrics down"
    assert failed.actor == "system"


class Verbose:
    """A summary far longer than what it replaces: the compaction cannot shrink the context."""

    name, model = "verbose", "verbose-1"

    def summarize(self, **kwargs: Any) -> str:
        return "Everything, again and at length. " * 400


def test_a_rejected_compaction_says_why_with_before_after_and_threshold():
    timeline = make_timeline()
    fill_to(timeline, 3_800, 4_500)
    with use(Verbose()), acting_as("key:abcd1234"):
        outcome = compaction_run(
            timeline=timeline, settings=_settings(timeline), trigger="manual", force=True
        )
    assert outcome.status == "rejected"
    row = Compaction.objects.get(timeline=timeline)
    entry = Operation.objects.get(timeline=timeline, kind="compaction_rejected")
    assert (entry.tokens_before, entry.tokens_after) == (row.before_tokens, row.after_tokens)
    assert entry.tokens_after >= entry.tokens_before
    assert entry.details["threshold_tokens"] == row.threshold_tokens == _settings(timeline).compaction_limit
    assert entry.details["reason"].startswith("rejected: the context would not shrink")
    assert (entry.compaction_id, entry.model, entry.actor) == (row.public_id, "verbose-1", "key:abcd1234")
    assert entry.seq_ranges == [[row.covered_from_seq, row.covered_to_seq]]


def test_a_skipped_attempt_says_why_with_its_tokens_and_threshold():
    timeline = make_timeline()
    add_turns(timeline, 1, result_words=10)
    outcome = compaction_run(timeline=timeline, settings=_settings(timeline), trigger="manual")
    assert outcome.status == "skipped"
    row = Compaction.objects.get(timeline=timeline)
    entry = Operation.objects.get(timeline=timeline, kind="compaction_skipped")
    assert entry.compaction_id == row.public_id and entry.actor == "system"
    assert entry.tokens_before == row.before_tokens > 0 and entry.tokens_after is None
    assert entry.details["threshold_tokens"] == row.threshold_tokens == _settings(timeline).compaction_limit
    assert f"threshold {row.threshold_tokens:,}" in entry.details["reason"]


def test_a_failed_compaction_is_in_the_log_with_its_error(monkeypatch):
    timeline = make_timeline()
    fill_to(timeline, 3_800, 4_500)

    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("digest exploded")

    monkeypatch.setattr(summarizer_services, "build_digest", broken)
    with pytest.raises(RuntimeError):
        compact_timeline(timeline.pk)
    entry = Operation.objects.get(timeline=timeline, kind="compaction_failed")
    assert entry.details["reason"] == "RuntimeError: digest exploded"
    assert entry.compaction_id == Compaction.objects.get(timeline=timeline).public_id


def test_a_render_that_prunes_pays_one_statement_for_its_entry(timeline):
    """The prune's entry is one statement (insert and trim together) in the prune's transaction;
    a render that prunes nothing writes no entry."""
    timeline.conversation.settings = {"ttl_keep_recent_turns": 2}
    timeline.conversation.save()
    add_turns(timeline, 4)
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    timeline_render(timeline=timeline, options=RenderOptions(), now=t0)
    with CaptureQueriesContext(connection) as warm:
        timeline_render(timeline=timeline, options=RenderOptions(), now=t0 + timedelta(minutes=1))
    with CaptureQueriesContext(connection) as cold:
        outcome = timeline_render(timeline=timeline, options=RenderOptions(), now=t0 + timedelta(hours=1))
    assert outcome.pruning_status == "pruned"
    entry = Operation.objects.get(timeline=timeline, kind="ttl_pruned")
    assert sorted(entry.paths) == sorted(outcome.hidden_paths)
    writes = [q["sql"] for q in cold.captured_queries if "timeline_app_operation" in q["sql"]]
    expected = 1 if connection.vendor == "postgresql" else 2  # SQLite: an insert, then the trim
    assert len(writes) == expected, writes
    assert not [q for q in warm.captured_queries if "timeline_app_operation" in q["sql"]]


def _settings(timeline: Timeline):
    from timeline_app.selectors.settings import timeline_settings_resolved

    return timeline_settings_resolved(timeline=timeline).settings
