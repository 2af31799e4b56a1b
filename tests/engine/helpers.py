"""Building realistic timelines through the services (the same path the API takes)."""

from __future__ import annotations

import json

from timeline_app import services
from timeline_app.models import Timeline
from timeline_app.rendering import blocks as b


def add_turn(
    timeline: Timeline,
    number: int,
    *,
    tool_calls: int = 2,
    result_words: int = 200,
    complete: bool = True,
    prompt: str | None = None,
) -> str:
    turn_id = f"turn_{number}"
    services.turn_start(
        timeline=timeline, turn_id=turn_id, prompt=prompt or f"Question {number}: find things."
    )
    for call in range(tool_calls):
        call_id = f"tc_{number}x{call}"
        meta = {"tool_call_id": call_id, "tool_id": "web_tools.web_search"}
        services.blocks_append(
            timeline=timeline,
            blocks=[
                services.NewBlock(
                    type=b.NOTES, author="react", turn_id=turn_id, text=f"searching {call}", meta=dict(meta)
                ),
                services.NewBlock(
                    type=b.TOOL_CALL,
                    author="react",
                    turn_id=turn_id,
                    mime="application/json",
                    text=json.dumps({"tool_call_id": call_id, "params": {"q": f"query {number}.{call}"}}),
                    meta=dict(meta),
                ),
                services.NewBlock(
                    type=b.TOOL_RESULT,
                    author="tool",
                    turn_id=turn_id,
                    mime="application/json",
                    text=json.dumps(
                        {"result": " ".join(f"word{number}_{call}_{i}" for i in range(result_words))}
                    ),
                    meta={**meta, "status": "ok"},
                ),
            ],
        )
    if complete:
        services.blocks_append(
            timeline=timeline,
            blocks=[
                services.NewBlock(
                    type=b.ASSISTANT_COMPLETION, author="assistant", turn_id=turn_id, text=f"Answer {number}."
                )
            ],
        )
    return turn_id


def add_turns(timeline: Timeline, count: int, **kwargs: object) -> list[str]:
    return [add_turn(timeline, number, **kwargs) for number in range(1, count + 1)]  # type: ignore[arg-type]
