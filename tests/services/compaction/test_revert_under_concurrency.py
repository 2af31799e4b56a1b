"""Issue 35: a revert racing appends or a background compaction loses nothing. Real threads, real
commits (PostgreSQL)."""

from __future__ import annotations

import threading

import pytest

from tests.factories import fill_to
from timeline_app import selectors
from timeline_app.domain import blocks as b
from timeline_app.domain.contributions import NewBlock
from timeline_app.models import Block, Compaction, Timeline
from timeline_app.selectors.settings import timeline_settings
from timeline_app.services.blocks import blocks_append
from timeline_app.services.compaction import SUPERSEDED, compaction_revert, compaction_run

from .helpers import in_thread, make_timeline, needs_concurrent_db
from .summarizers import BlockingSummarizer

pytestmark = [pytest.mark.django_db(transaction=True), needs_concurrent_db]


def compact(timeline: Timeline, summarizer=None):
    return compaction_run(
        timeline=timeline,
        settings=timeline_settings(timeline=timeline),
        trigger="background",
        force=True,
        summarizer=summarizer,
    )


def note(tag: str, i: int) -> NewBlock:
    return NewBlock(type=b.NOTES, author=tag, text=f"{tag} {i}", client_id=f"{tag}-{i}")


def assert_every_block_visible_or_covered(timeline: Timeline) -> None:
    visible = {blk.seq for blk in selectors.visible_window(timeline=timeline)}
    covered: set[int] = set()
    for row in Compaction.objects.filter(timeline=timeline, status="applied"):
        if row.covered_from_seq is not None:
            covered.update(range(row.covered_from_seq, row.covered_to_seq + 1))
    for seq, kind in (
        Block.objects.filter(timeline=timeline).exclude(type=b.SUMMARY).values_list("seq", "type")
    ):
        assert seq in visible or seq in covered, f"block {seq} ({kind}) lost"


def test_appends_during_a_revert_are_stored_once_and_visible():
    timeline = make_timeline(settings={"max_tokens": 200_000, "keep_recent_tokens": 300})
    fill_to(timeline, 2_000)
    applied = compact(timeline)
    assert applied.status == "applied"
    record = Compaction.objects.get(pk=applied.compaction_id)
    start = threading.Barrier(4)

    def writer(tag: str):
        def run() -> int:
            start.wait(10)
            for i in range(20):
                blocks_append(timeline=Timeline.objects.get(pk=timeline.pk), blocks=[note(tag, i)])
            return 20

        return run

    threads = [in_thread(writer(tag)) for tag in ("a", "b", "c")]
    start.wait(10)
    compaction_revert(timeline=timeline, public_id=record.public_id, actor="test")
    for thread, box in threads:
        thread.join(30)
        assert box.get("result") == 20, box.get("error")
    for tag in ("a", "b", "c"):
        stored = list(
            Block.objects.filter(timeline=timeline, author=tag).order_by("seq").values_list("text", flat=True)
        )
        assert stored == [f"{tag} {i}" for i in range(20)], tag  # each once, in order
    window = selectors.visible_window(timeline=timeline)
    assert not any(blk.type == b.SUMMARY for blk in window)
    assert_every_block_visible_or_covered(timeline)
    assert (
        len({blk.seq for blk in window})
        == Block.objects.filter(timeline=timeline).exclude(type=b.SUMMARY).count()
    )


def test_a_revert_racing_a_background_compaction_loses_nothing_and_the_compaction_stands_down():
    timeline = make_timeline(settings={"max_tokens": 200_000, "keep_recent_tokens": 300})
    fill_to(timeline, 2_000)
    first = compact(timeline)
    fill_to(timeline, 3_000)
    summarizer = BlockingSummarizer()
    thread, box = in_thread(lambda: compact(Timeline.objects.get(pk=timeline.pk), summarizer))
    assert summarizer.entered.wait(10), box.get("error")
    late = blocks_append(timeline=timeline, blocks=[note("late", i) for i in range(5)])
    reverted = compaction_revert(
        timeline=timeline, public_id=Compaction.objects.get(pk=first.compaction_id).public_id, actor="test"
    )
    summarizer.release.set()
    thread.join(30)
    assert "error" not in box, box.get("error")
    # it planned on the reverted compaction's window: its apply check stands it down
    assert (box["result"].status, box["result"].error) == ("skipped", SUPERSEDED)
    assert reverted.status == "reverted"
    assert not Compaction.objects.filter(timeline=timeline, status="applied").exists()
    window = selectors.visible_window(timeline=timeline)
    assert [blk.seq for blk in window if blk.author == "late"] == [row.seq for row in late]
    assert_every_block_visible_or_covered(timeline)
    # and the next compaction works as usual
    assert compact(Timeline.objects.get(pk=timeline.pk)).status == "applied"
    assert_every_block_visible_or_covered(timeline)
