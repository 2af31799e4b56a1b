"""Seed 002 "Test Coverage", through the shell: services, storage and the render endpoint."""

from __future__ import annotations

import pytest

from tests.factories import add_turn, add_turns
from timeline_app import selectors
from timeline_app.domain import blocks as b
from timeline_app.domain.contributions import tool_call_blocks
from timeline_app.models import Block, Compaction
from timeline_app.rendering.pipeline import RenderOptions
from timeline_app.selectors.settings import timeline_settings
from timeline_app.services.blocks import blocks_append, turn_start
from timeline_app.services.compaction import compaction_run
from timeline_app.services.hiding import blocks_hide
from timeline_app.services.render import timeline_render

pytestmark = pytest.mark.django_db

SMALL = {"max_tokens": 5_000, "keep_recent_tokens": 1_500}


def small_settings(conversation, **extra):
    conversation.settings = {**SMALL, **extra}
    conversation.save()


def render(timeline, **kwargs):
    options = RenderOptions(format=kwargs.pop("format", "anthropic"))
    return timeline_render(timeline=timeline, options=options, **kwargs)


def test_summary_insertion(conversation, timeline):
    small_settings(conversation)
    add_turns(timeline, 8)
    before = Block.objects.count()

    outcome = render(timeline)

    assert outcome.compaction is not None
    summary = Block.objects.get(type=b.SUMMARY)
    assert summary.path == f"su:{summary.turn_id}.conv.range.summary"
    assert summary.meta["covered_turn_ids"][0] == "turn_1"
    assert "compaction_digest" in summary.meta
    assert Block.objects.count() == before + 1, "compaction adds the summary and deletes nothing"
    window = selectors.visible_window(timeline=timeline)
    assert window[0].type == b.SUMMARY
    assert window[1].seq == summary.meta["first_retained_seq"]
    assert outcome.rendered.blocks[0]["text"].startswith("[CONVERSATION SUMMARY]")
    assert outcome.rendered.tokens["total"] <= 5_000


def test_split_turn_handling(conversation, timeline):
    small_settings(conversation, keep_recent_tokens=2_500)
    add_turns(timeline, 2)
    add_turn(timeline, 3, tool_calls=12, complete=False)

    outcome = render(timeline)

    assert outcome.compaction is not None and outcome.compaction.split_turn_id == "turn_3"
    summary = Block.objects.get(type=b.SUMMARY)
    assert summary.meta["split_turn_id"] == "turn_3"
    assert "## Turn Context (split turn)" in summary.text
    window = selectors.visible_window(timeline=timeline)
    first_retained = window[1]
    assert first_retained.turn_id == "turn_3" and first_retained.type != b.TOOL_RESULT
    assert first_retained.seq == summary.meta["first_retained_seq"]


def test_render_after_a_split_shows_the_split_turn_header_as_continued(conversation, timeline):
    small_settings(conversation, keep_recent_tokens=2_500)
    add_turns(timeline, 2)
    add_turn(timeline, 3, tool_calls=12, complete=False)
    assert render(timeline).compaction is not None
    header = Block.objects.get(type=b.TURN_HEADER, turn_id="turn_3").to_value()

    first = render(timeline, format="text").rendered
    texts = [part["text"] for part in first.blocks]
    assert texts[0].startswith("[CONVERSATION SUMMARY] ") and "split_turn=turn_3" in texts[0]
    assert texts[1] == f"[TURN turn_3] ts={header.ts} (continued)"
    assert texts.count(texts[1]) == 1
    # produced at render time: no block stored, and the next render gives the same bytes
    assert Block.objects.filter(type=b.TURN_HEADER, turn_id="turn_3").count() == 1
    assert render(timeline, format="text").rendered.blocks == first.blocks


def test_no_compaction_under_limit(conversation, timeline):
    add_turns(timeline, 3)
    outcome = render(timeline)
    assert outcome.compaction is None
    assert not Block.objects.filter(type=b.SUMMARY).exists()
    assert not Compaction.objects.exists()


def test_compaction_after_existing_summary(conversation, timeline):
    small_settings(conversation)
    add_turns(timeline, 8)
    render(timeline)
    first = Block.objects.get(type=b.SUMMARY)
    for number in range(9, 17):
        add_turn(timeline, number)

    outcome = render(timeline)

    assert outcome.compaction is not None
    second = Block.objects.filter(type=b.SUMMARY).order_by("-seq").first()
    assert second.pk != first.pk
    assert (
        second.meta["covered_turn_ids"][: len(first.meta["covered_turn_ids"])]
        == first.meta["covered_turn_ids"]
    )
    previous_calls = set(first.meta["compaction_digest"]["tool_call_ids"])
    assert previous_calls <= set(second.meta["compaction_digest"]["tool_call_ids"])
    window = selectors.visible_window(timeline=timeline)
    assert [blk.type for blk in window].count(b.SUMMARY) == 1 and window[0].seq == second.seq


def test_digest_includes_hidden_blocks(conversation, timeline):
    small_settings(conversation)
    add_turns(timeline, 8)
    blocks_hide(
        timeline=timeline, path="tc:turn_1.tc_1x0.result", replacement_text="[hidden: search results]"
    )

    render(timeline, force_sanitize=True)

    digest = Block.objects.get(type=b.SUMMARY).meta["compaction_digest"]
    assert {
        "path": "tc:turn_1.tc_1x0.result",
        "replacement_text": "[hidden: search results]",
        "reason": "manual",
    } in digest["hidden"]


def test_tool_boundary_preservation(conversation, timeline):
    for keep in (300, 700, 1_100, 1_500, 1_900):
        small_settings(conversation, keep_recent_tokens=keep)
        Compaction.objects.all().delete()
        Block.objects.filter(type=b.SUMMARY).delete()
        if not Block.objects.exists():
            add_turns(timeline, 8)
        outcome = compaction_run(
            timeline=timeline, settings=timeline_settings(timeline=timeline), trigger="forced", force=True
        )
        assert outcome.status == "applied"
        window = selectors.visible_window(timeline=timeline)
        assert window[1].type != b.TOOL_RESULT
        call_ids_visible = {blk.tool_call_id for blk in window[1:] if blk.type == b.TOOL_RESULT}
        call_ids_with_call = {blk.tool_call_id for blk in window[1:] if blk.type == b.TOOL_CALL}
        assert call_ids_visible <= call_ids_with_call, "a visible tool result never lost its call"


def test_cache_points_after_render(conversation, timeline):
    small_settings(conversation)
    add_turns(timeline, 8)
    add_turn(timeline, 9, tool_calls=1, result_words=20, complete=False)

    outcome = render(timeline)

    rendered = outcome.rendered
    assert outcome.compaction is not None
    assert 1 <= len(rendered.cache_points) <= 3
    for index in rendered.cache_points:
        assert rendered.blocks[index]["cache_control"] == {"type": "ephemeral"}
    marked = [i for i, part in enumerate(rendered.blocks) if "cache_control" in part]
    assert marked == rendered.cache_points
    assert rendered.cache_points[-1] == len(rendered.blocks) - 1, "tail point on the last stable part"
    header_index = next(
        i for i, p in enumerate(rendered.blocks) if p.get("text", "").startswith("[TURN turn_9]")
    )
    assert header_index - 1 in rendered.cache_points, "previous-turn point just before the current turn"


@pytest.mark.parametrize("turn_e", ["finished", "waiting for a tool result"])
def test_seed_002_diagram_pretail_point_is_end_of_turn_a(conversation, timeline, turn_e):
    for number in range(1, 5):  # turns A..D: one round each
        add_turn(timeline, number, tool_calls=0)
    if turn_e == "finished":
        add_turn(timeline, 5, tool_calls=0)
    else:
        turn_start(timeline=timeline, turn_id="turn_5", prompt="Question 5.")
        pending = tool_call_blocks(
            turn_id="turn_5", tool_call_id="tc_5x0", tool_id="web", params={}, result={}, note="looking"
        )
        blocks_append(timeline=timeline, blocks=[x for x in pending if x.type != b.TOOL_RESULT])
    last_seq = {
        turn: Block.objects.filter(turn_id=turn).order_by("-seq").values_list("seq", flat=True)[0]
        for turn in ("turn_1", "turn_4", "turn_5")
    }

    outcome = render(timeline)

    assert outcome.compaction is None
    assert outcome.rendered.marked_seqs == [last_seq["turn_1"], last_seq["turn_4"], last_seq["turn_5"]]


def test_compaction_is_rejected_when_it_would_not_reduce_tokens(conversation, timeline, monkeypatch):
    small_settings(conversation)
    add_turns(timeline, 8)

    class Verbose:
        name, model = "verbose", "none"

        def summarize(self, *, blocks, previous_summary, max_tokens, purpose):
            return "very long summary " * 5_000

    outcome = compaction_run(
        timeline=timeline,
        settings=timeline_settings(timeline=timeline),
        trigger="forced",
        force=True,
        summarizer=Verbose(),
    )
    assert outcome.status == "rejected"
    assert not Block.objects.filter(type=b.SUMMARY).exists()
    assert Compaction.objects.get().status == "rejected"


def test_summarizer_failure_falls_back_to_extractive_and_is_recorded(conversation, timeline):
    from compaction.summarizers import SummarizerError

    small_settings(conversation)
    add_turns(timeline, 8)

    class Failing:
        name, model = "anthropic", "claude-test"

        def summarize(self, **kwargs):
            raise SummarizerError("429 rate_limit_error after 3 tries")

    outcome = render(timeline, summarizer=Failing())

    assert outcome.compaction is not None
    record = Compaction.objects.get()
    assert record.status == "applied" and record.summarizer == "extractive"
    assert "429" in record.error
    assert Block.objects.get(type=b.SUMMARY).text


def test_signals_fire_with_the_seed_payload(conversation, timeline):
    from timeline_app.signals import on_after_compaction, on_before_compaction

    small_settings(conversation)
    add_turns(timeline, 8)
    seen = []

    def before(sender, payload, **kwargs):
        seen.append(("before", payload))

    def after(sender, payload, **kwargs):
        seen.append(("after", payload))

    on_before_compaction.connect(before)
    on_after_compaction.connect(after)
    try:
        render(timeline)
    finally:
        on_before_compaction.disconnect(before)
        on_after_compaction.disconnect(after)
    assert [name for name, _ in seen] == ["before", "after"]
    assert set(seen[0][1]) == {"before_tokens"}
    assert set(seen[1][1]) == {"before_tokens", "after_tokens", "compacted_tokens"}
    assert seen[1][1]["after_tokens"] < seen[1][1]["before_tokens"]


def test_forced_compaction_compacts_even_under_the_limit(conversation, timeline):
    add_turns(timeline, 4)
    outcome = render(timeline, force_sanitize=True)
    assert outcome.compaction is not None
    assert Compaction.objects.get().trigger == "forced"
