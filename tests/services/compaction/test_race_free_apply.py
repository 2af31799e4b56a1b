"""DESIGN §6: plan on a snapshot, summarize outside any transaction, apply in a short transaction
that checks nothing it planned against changed. Real threads, real commits."""

from __future__ import annotations

import threading
import time

import pytest

from tests.factories import fill_to
from timeline_app import selectors
from timeline_app.domain import blocks as b
from timeline_app.domain.contributions import NewBlock
from timeline_app.models import Block, Compaction, Timeline
from timeline_app.rendering.pipeline import RenderOptions
from timeline_app.selectors.settings import timeline_settings
from timeline_app.services.blocks import blocks_append
from timeline_app.services.compaction import TAKEN_OVER, compaction_run
from timeline_app.services.render import timeline_render_preview

from .helpers import in_thread, make_timeline, needs_concurrent_db
from .summarizers import BlockingSummarizer

pytestmark = pytest.mark.django_db(transaction=True)


def compact(timeline: Timeline, summarizer, *, trigger: str = "background", task_id: str = ""):
    return lambda: compaction_run(
        timeline=timeline,
        settings=timeline_settings(timeline=timeline),
        trigger=trigger,
        force=True,
        summarizer=summarizer,
        task_id=task_id,
    )


def summaries(timeline: Timeline) -> int:
    return Block.objects.filter(timeline=timeline, type=b.SUMMARY).count()


def test_blocks_contributed_during_the_summary_survive_in_order_after_it():
    timeline = make_timeline()
    fill_to(timeline, 4_600)
    summarizer = BlockingSummarizer()
    thread, box = in_thread(compact(timeline, summarizer))
    assert summarizer.entered.wait(10), box.get("error")

    late = []
    for batch in range(10):
        late += blocks_append(
            timeline=timeline,
            blocks=[
                NewBlock(
                    type=b.NOTES,
                    author="late",
                    text=f"late {batch * 5 + i}",
                    client_id=f"late-{batch * 5 + i}",
                )
                for i in range(5)
            ],
        )
    summarizer.release.set()
    thread.join(30)

    assert "error" not in box, box.get("error")
    assert box["result"].status == "applied"
    assert summarizer.in_transaction and not any(summarizer.in_transaction), (
        "no transaction while summarizing"
    )
    window = selectors.visible_window(timeline=timeline)
    assert window[0].type == b.SUMMARY
    visible_late = [blk.text for blk in window if blk.author == "late"]
    assert visible_late == [f"late {i}" for i in range(50)], "all 50, in order, visible after the summary"
    assert window[-50:] == [blk for blk in window if blk.author == "late"], "nothing reordered behind them"
    stored = Block.objects.filter(timeline=timeline, author="late").order_by("seq")
    assert [(row.seq, row.text, row.hidden) for row in stored] == [(row.seq, row.text, False) for row in late]
    record = Compaction.objects.get(status="applied")
    assert record.first_retained_seq <= late[0].seq, "the plan's cut is before the late blocks"
    shown = timeline_render_preview(timeline=timeline, options=RenderOptions()).rendered.tokens
    assert record.after_tokens == shown["visible"], "late blocks are counted"


@needs_concurrent_db
def test_two_concurrent_compactions_of_one_timeline_end_with_exactly_one_new_summary():
    timeline = make_timeline()
    fill_to(timeline, 4_600)
    summarizer = BlockingSummarizer()
    start = threading.Barrier(2)
    run = compact(timeline, summarizer)

    def race():
        start.wait(10)
        return run()

    runs = [in_thread(race) for _ in range(2)]
    assert summarizer.entered.wait(10)
    # Release only once the loser has come back: both planned and claimed at the same time.
    deadline = time.monotonic() + 10
    while not any("result" in box or "error" in box for _, box in runs) and time.monotonic() < deadline:
        time.sleep(0.01)
    summarizer.release.set()
    for thread, _ in runs:
        thread.join(30)

    assert [box.get("error") for _, box in runs] == [None, None]
    outcomes = sorted(box["result"].status for _, box in runs)
    assert outcomes == ["applied", "busy"]
    assert summaries(timeline) == 1
    assert Compaction.objects.filter(status="applied").count() == 1
    assert not Compaction.objects.filter(status="running").exists()


def test_a_second_compaction_while_one_is_summarizing_is_a_no_op():
    timeline = make_timeline()
    fill_to(timeline, 4_600)
    summarizer = BlockingSummarizer()
    thread, box = in_thread(compact(timeline, summarizer))
    assert summarizer.entered.wait(10)

    second = compact(timeline, BlockingSummarizer(timeout=0.1))()
    summarizer.release.set()
    thread.join(30)

    assert second.status == "busy"
    assert box["result"].status == "applied"
    assert summaries(timeline) == 1


@pytest.mark.parametrize("first_to_finish", ["dead", "redelivered"])
def test_a_redelivered_task_takes_its_claim_over_and_only_one_run_applies(first_to_finish):
    """The worker presumed dead was only slow: both runs summarize, exactly one applies."""
    timeline = make_timeline()
    fill_to(timeline, 4_600)
    slow, redelivered = BlockingSummarizer(), BlockingSummarizer()
    first_thread, first = in_thread(compact(timeline, slow, task_id="task-1"))
    assert slow.entered.wait(10)
    second_thread, second = in_thread(compact(timeline, redelivered, task_id="task-1"))
    assert redelivered.entered.wait(10), "the same task id takes the running claim over"

    order = [(slow, first_thread), (redelivered, second_thread)]
    if first_to_finish == "redelivered":
        order.reverse()
    for summarizer, thread in order:
        summarizer.release.set()
        thread.join(30)

    assert first["result"].status == "skipped" and first["result"].error == TAKEN_OVER
    assert second["result"].status == "applied"
    assert summaries(timeline) == 1
    rows = list(Compaction.objects.order_by("id").values_list("task_id", "status", "error"))
    assert rows == [("task-1", "failed", TAKEN_OVER), ("task-1", "applied", "")]


def test_a_compaction_planned_before_another_applied_is_skipped_as_superseded():
    """Two runs that both hold the right to apply (one took a stale claim over): the apply check
    on the latest compaction lets only the first through."""
    timeline = make_timeline()
    fill_to(timeline, 4_600)
    stuck = BlockingSummarizer()
    thread, box = in_thread(compact(timeline, stuck, task_id="task-a"))
    assert stuck.entered.wait(10)
    # A second run with the claim of its own (the first one's was released as stale).
    Compaction.objects.filter(status="running").update(status="failed", error="stale")
    quick = compaction_run(
        timeline=timeline, settings=timeline_settings(timeline=timeline), trigger="manual", force=True
    )
    stuck.release.set()
    thread.join(30)

    assert quick.status == "applied"
    assert box["result"].status == "skipped"
    assert summaries(timeline) == 1


@needs_concurrent_db
def test_concurrent_contributors_lose_nothing_while_a_compaction_summarizes_and_applies():
    timeline = make_timeline()
    fill_to(timeline, 4_600)
    summarizer = BlockingSummarizer()
    compaction_thread, box = in_thread(compact(timeline, summarizer))
    assert summarizer.entered.wait(10)
    written = {writer: threading.Event() for writer in range(4)}

    def contribute(writer: int) -> None:
        for n in range(25):
            blocks_append(
                timeline=timeline,
                blocks=[NewBlock(type=b.NOTES, author=f"w{writer}", text=f"{writer}:{n}")],
            )
            if n == 5:
                written[writer].set()

    writers = [in_thread(lambda w=w: contribute(w)) for w in range(4)]
    for event in written.values():
        assert event.wait(10)
    summarizer.release.set()  # the apply now races the remaining appends
    for thread, _ in [*writers, (compaction_thread, box)]:
        thread.join(30)

    assert [writer_box.get("error") for _, writer_box in writers] == [None] * 4
    assert box["result"].status == "applied"
    window = selectors.visible_window(timeline=timeline)
    assert window[0].type == b.SUMMARY
    for writer in range(4):
        texts = [blk.text for blk in window if blk.author == f"w{writer}"]
        assert texts == [f"{writer}:{n}" for n in range(25)]
    seqs = list(Block.objects.filter(timeline=timeline).values_list("seq", flat=True))
    assert len(seqs) == len(set(seqs))


def test_a_run_whose_plan_went_stale_before_its_claim_plans_again_instead_of_summarizing(monkeypatch):
    from timeline_app.services.compaction import run as compaction_services

    timeline = make_timeline()
    fill_to(timeline, 4_600)
    original = compaction_services.claim

    def claim_after_another_run_applied(**kwargs):
        monkeypatch.setattr(compaction_services, "claim", original)
        assert compact(timeline, None, trigger="manual")().status == "applied"
        return original(**kwargs)

    monkeypatch.setattr(compaction_services, "claim", claim_after_another_run_applied)
    summarizer = BlockingSummarizer(timeout=0.1)
    outcome = compaction_run(
        timeline=timeline,
        settings=timeline_settings(timeline=timeline),
        trigger="background",
        summarizer=summarizer,
    )

    assert outcome.status == "skipped"
    assert summarizer.calls == 0, "no summary paid for and thrown away"
    assert summaries(timeline) == 1
    assert sorted(Compaction.objects.values_list("trigger", "status")) == [
        ("background", "skipped"),
        ("manual", "applied"),
    ]
