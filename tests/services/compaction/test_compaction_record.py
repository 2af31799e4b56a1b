"""What a compaction leaves behind: the record's fields, and the seed's before/after hooks."""

from __future__ import annotations

import time
from typing import Any

import pytest
from django.db import connection

from compaction.summary import ExtractiveSummarizer
from tests.factories import fill_to
from timeline_app.domain import blocks as b
from timeline_app.models import Block, Compaction
from timeline_app.rendering.pipeline import RenderOptions
from timeline_app.services.compaction import summary as summarizer_services
from timeline_app.services.render import timeline_render_preview
from timeline_app.signals import on_after_compaction, on_before_compaction
from timeline_app.tasks import compact_timeline

from .helpers import make_timeline
from .summarizers import use


class Pausing:
    name, model = "pausing", "pausing-1"

    def summarize(self, **kwargs: Any) -> str:
        time.sleep(0.05)
        return ExtractiveSummarizer().summarize(**kwargs)


@pytest.mark.django_db
def test_an_applied_compaction_records_trigger_timings_tokens_summarizer_and_status():
    timeline = make_timeline()
    before = fill_to(timeline, 3_800, 4_500)

    with use(Pausing()):
        compact_timeline.apply(args=(timeline.pk,), task_id="task-r").get()

    record = Compaction.objects.get()
    summary = Block.objects.get(type=b.SUMMARY)
    assert record.trigger == "background"
    assert record.status == "applied"
    assert (record.summarizer, record.model, record.error) == ("pausing", "pausing-1", "")
    assert record.task_id == "task-r"
    assert record.summary_block == summary
    assert record.before_tokens == before
    # The next render's visible tokens, its "(continued)" header included when the cut split a turn.
    shown = timeline_render_preview(timeline=timeline, options=RenderOptions()).rendered.tokens
    assert record.after_tokens == shown["visible"] < before
    assert record.compacted_tokens > 0
    assert record.first_retained_seq == summary.meta["first_retained_seq"]
    assert record.covered_from_seq < record.covered_to_seq < record.first_retained_seq
    assert record.covered_turn_ids == summary.meta["covered_turn_ids"]
    assert record.started_at <= record.finished_at
    assert record.summarize_ms >= 50 * (2 if record.split_turn_id else 1)
    assert record.duration_ms >= record.summarize_ms


@pytest.mark.django_db
def test_a_compaction_that_breaks_is_recorded_as_failed_with_its_error(monkeypatch):
    timeline = make_timeline()
    fill_to(timeline, 3_800, 4_500)

    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("digest exploded")

    monkeypatch.setattr(summarizer_services, "build_digest", broken)
    with pytest.raises(RuntimeError):
        compact_timeline(timeline.pk)

    record = Compaction.objects.get()
    assert record.status == "failed"
    assert record.error == "RuntimeError: digest exploded"
    assert record.finished_at is not None
    assert not Block.objects.filter(type=b.SUMMARY).exists()


@pytest.mark.django_db(transaction=True)
def test_the_before_and_after_signals_fire_with_the_seed_payload_outside_any_transaction():
    timeline = make_timeline()
    fill_to(timeline, 3_800, 4_500)
    seen: list[tuple[str, dict[str, Any]]] = []

    def before(sender: Any, **kwargs: Any) -> None:
        seen.append(("before", {**kwargs, "atomic": connection.in_atomic_block}))

    def after(sender: Any, **kwargs: Any) -> None:
        seen.append(("after", {**kwargs, "atomic": connection.in_atomic_block}))

    on_before_compaction.connect(before)
    on_after_compaction.connect(after)
    try:
        compact_timeline(timeline.pk)
    finally:
        on_before_compaction.disconnect(before)
        on_after_compaction.disconnect(after)

    record = Compaction.objects.get()
    (first, before_kw), (second, after_kw) = seen
    assert (first, second) == ("before", "after")
    assert before_kw["payload"] == {"before_tokens": record.before_tokens}
    assert after_kw["payload"] == {
        "before_tokens": record.before_tokens,
        "after_tokens": record.after_tokens,
        "compacted_tokens": record.compacted_tokens,
    }
    assert before_kw["trigger"] == after_kw["trigger"] == "background"
    assert before_kw["timeline"].pk == after_kw["timeline"].pk == timeline.pk
    assert not before_kw["atomic"] and not after_kw["atomic"]


@pytest.mark.django_db
def test_no_after_signal_when_the_compaction_is_not_applied():
    timeline = make_timeline()
    fill_to(timeline, 3_800, 4_500)
    fired: list[str] = []

    def after(sender: Any, **kwargs: Any) -> None:
        fired.append("after")

    class Verbose:
        name, model = "verbose", "v"

        def summarize(self, **kwargs: Any) -> str:
            return "very long summary " * 3_000

    on_after_compaction.connect(after)
    try:
        with use(Verbose()):
            result = compact_timeline(timeline.pk)
    finally:
        on_after_compaction.disconnect(after)

    assert result["status"] == "rejected"
    assert fired == []
    assert Compaction.objects.get().status == "rejected"
