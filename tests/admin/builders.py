"""Conversations for the admin tests, written through the services (``tests/factories.py``) and
one direct hide."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

from tests.factories import TimelineFactory, add_turn
from timeline_app.domain import blocks as b
from timeline_app.domain.contributions import NewBlock
from timeline_app.models import Block, Compaction, Conversation, Tenant, Timeline
from timeline_app.rendering.pipeline import RenderOptions
from timeline_app.selectors.settings import timeline_settings
from timeline_app.services.blocks import blocks_append, turn_start
from timeline_app.services.compaction import compaction_run
from timeline_app.services.render import timeline_render

LOREM = (
    "The restaurant list was checked against the city's opening hours and the reviews of the last "
    "twelve months; prices, addresses and the menu card were compared line by line. "
)


def contribute_turns(timeline: Timeline, *, turns: int, prefix: str = "t", start: int = 1) -> None:
    """``turns`` turns ``turn_{prefix}{number:03d}``, each: header, prompt, notes, tool call
    ``tc_{prefix}{number:03d}x0``, a markdown tool result, completion (long texts)."""
    for number in range(start, start + turns):
        add_turn(
            timeline,
            number,
            turn_id=f"turn_{prefix}{number:03d}",
            prompt=f"Question {number}: {LOREM}",
            tool_calls=1,
            result=f"Result {number}: {LOREM * 3}",
            note="Searching.",
            answer=f"Answer {number}. {LOREM}",
        )


def hide(timeline: Timeline, *, path: str, text: str = "[pruned: tool output, read it by path]") -> Block:
    Block.objects.filter(timeline=timeline, path=path).update(
        hidden=True, replacement_text=text, hidden_reason="ttl", replacement_tokens=8
    )
    return Block.objects.get(timeline=timeline, path=path)


def compact(timeline: Timeline) -> Compaction:
    timeline.refresh_from_db()
    outcome = compaction_run(
        timeline=timeline, settings=timeline_settings(timeline=timeline), trigger="manual", force=True
    )
    assert outcome.status == "applied", outcome
    return Compaction.objects.select_related("summary_block").get(pk=outcome.compaction_id)


def compacted_conversation(
    tenant: Tenant, *, public_id: str = "conv-compacted", title: str = "Dinner plans", turns: int = 8
) -> tuple[Conversation, Timeline]:
    """A conversation whose older turns are compacted: turn 1's tool result was hidden before the
    compaction (it shows in the digest), turn ``turns``'s tool result is hidden in the visible part."""
    timeline = TimelineFactory(
        conversation__tenant=tenant,
        conversation__public_id=public_id,
        conversation__title=title,
        conversation__settings={"max_tokens": 4000},
    )
    conversation = timeline.conversation
    contribute_turns(timeline, turns=turns)
    hide(timeline, path=b.tool_result_path("turn_t001", "tc_t001x0"))
    # Keep exactly the newest half of the turns, so the cut lands on a turn header (no split).
    kept_from = Block.objects.get(
        timeline=timeline, turn_id=f"turn_t{turns // 2 + 1:03d}", type=b.TURN_HEADER
    ).seq
    conversation.settings = {
        "max_tokens": 4000,
        "keep_recent_tokens": sum(
            Block.objects.filter(timeline=timeline, seq__gte=kept_from).values_list("tokens", flat=True)
        ),
    }
    conversation.save()
    compact(timeline)
    hide(timeline, path=b.tool_result_path(f"turn_t{turns:03d}", f"tc_t{turns:03d}x0"))
    return conversation, timeline


def split_turn_conversation(
    tenant: Tenant, *, public_id: str = "conv-split"
) -> tuple[Conversation, Timeline]:
    """One short turn, then one long turn of many tool rounds: a forced compaction cuts inside it."""
    timeline = TimelineFactory(
        conversation__tenant=tenant,
        conversation__public_id=public_id,
        conversation__title="Split",
        conversation__settings={"max_tokens": 4000},
    )
    conversation = timeline.conversation
    contribute_turns(timeline, turns=1, prefix="s")
    turn_start(timeline=timeline, turn_id="turn_long", prompt="Research everything. " + LOREM)
    for round_no in range(12):
        call_id = f"tc_long{round_no:02d}"
        meta = {"tool_id": "web_tools.fetch_page", "tool_call_id": call_id}
        blocks_append(
            timeline=timeline,
            blocks=[
                NewBlock(
                    type=b.TOOL_CALL,
                    author="react",
                    turn_id="turn_long",
                    mime="application/json",
                    text=json.dumps({"tool_call_id": call_id, "params": {"page": round_no}}),
                    meta=dict(meta),
                ),
                NewBlock(
                    type=b.TOOL_RESULT,
                    author="tool",
                    turn_id="turn_long",
                    mime="text/markdown",
                    text=f"Page {round_no}: {LOREM * 2}",
                    meta={**meta, "status": "ok"},
                ),
            ],
        )
    compaction = compact(timeline)
    assert compaction.split_turn_id == "turn_long", compaction.split_turn_id
    return conversation, timeline


def rendered_history(timeline: Timeline, *, start: datetime) -> list[str]:
    """Renders of ``timeline`` that leave a history: the first one (arms the TTL clock), one after
    an appended turn within the TTL, and one an hour later (the cache expired: pruning). Returns
    the pruning statuses, oldest first."""
    options = RenderOptions(format="text", include_sources=True, include_announce=True)
    statuses = [timeline_render(timeline=timeline, options=options, now=start).pruning_status]
    last = Block.objects.filter(timeline=timeline).order_by("-seq").values_list("turn_id", flat=True)[0]
    number = int(last.rsplit("t", 1)[-1]) + 1 if last.rsplit("t", 1)[-1].isdigit() else 100
    contribute_turns(timeline, turns=1, start=number)
    timeline.refresh_from_db()
    statuses.append(
        timeline_render(timeline=timeline, options=options, now=start + timedelta(seconds=30)).pruning_status
    )
    timeline.refresh_from_db()
    statuses.append(
        timeline_render(timeline=timeline, options=options, now=start + timedelta(hours=1)).pruning_status
    )
    return statuses


def reported_usage(timeline: Timeline, *, start: datetime, model: str = "claude-sonnet-4-5") -> list[str]:
    """Three renders of ``timeline`` a minute apart, each with Anthropic usage reported: a cold
    write, a warm read, then a read the forecast promised but the provider did not give (an
    unexplained miss, reason ``system_changed``) after a turn was appended, so that render names
    a first changed block. Returns the render ids, oldest first."""
    from timeline_app.services.usage import render_usage_report

    options = RenderOptions(format="anthropic")
    ids = []
    for minute in range(3):
        if minute == 2:
            contribute_turns(timeline, turns=1, prefix="late", start=1)
        timeline.refresh_from_db()
        outcome = timeline_render(timeline=timeline, options=options, now=start + timedelta(minutes=minute))
        forecast = outcome.forecast.forecast
        promised = forecast.cache_read_input_tokens
        written = forecast.cache_creation_input_tokens
        if minute == 2:
            promised, written = 0, forecast.cache_read_input_tokens + written
        usage = {
            "input_tokens": forecast.uncached_input_tokens,
            "output_tokens": 400,
            "cache_creation_input_tokens": written,
            "cache_read_input_tokens": promised,
        }
        body = {
            "usage": usage,
            "model": model,
            **({"cache_miss_reason": "system_changed"} if minute == 2 else {}),
        }
        render_usage_report(
            timeline=timeline, render_id=outcome.render_id, body=body, now=start + timedelta(minutes=minute)
        )
        ids.append(outcome.render_id)
    return ids
