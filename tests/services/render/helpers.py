"""Building realistic timelines through the services (the same path the API takes)."""

from __future__ import annotations

from timeline_app.models import Timeline
from timeline_app.rendering import blocks as b
from timeline_app.rendering.contributions import NewBlock, tool_call_blocks
from timeline_app.services.blocks import blocks_append, turn_start


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
    turn_start(timeline=timeline, turn_id=turn_id, prompt=prompt or f"Question {number}: find things.")
    for call in range(tool_calls):
        blocks_append(
            timeline=timeline,
            blocks=tool_call_blocks(
                turn_id=turn_id,
                tool_call_id=f"tc_{number}x{call}",
                tool_id="web_tools.web_search",
                params={"q": f"query {number}.{call}"},
                result={"result": " ".join(f"word{number}_{call}_{i}" for i in range(result_words))},
                note=f"searching {call}",
            ),
        )
    if complete:
        blocks_append(
            timeline=timeline,
            blocks=[
                NewBlock(
                    type=b.ASSISTANT_COMPLETION, author="assistant", turn_id=turn_id, text=f"Answer {number}."
                )
            ],
        )
    return turn_id


def add_turns(timeline: Timeline, count: int, **kwargs: object) -> list[str]:
    return [add_turn(timeline, number, **kwargs) for number in range(1, count + 1)]  # type: ignore[arg-type]
