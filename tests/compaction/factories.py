"""Small block builders for the compaction tests."""

from __future__ import annotations

from typing import Any

from timeline_app.domain.blocks import (
    ASSISTANT_COMPLETION,
    SUMMARY,
    TOOL_CALL,
    TOOL_RESULT,
    TURN_HEADER,
    USER_PROMPT,
    Block,
    completion_path,
    summary_path,
    tool_call_path,
    tool_result_path,
    turn_header_path,
    user_prompt_path,
)


class Stream:
    """Appends blocks with increasing ``seq``."""

    def __init__(self) -> None:
        self.blocks: list[Block] = []

    def add(self, type_: str, *, tokens: int = 10, **kw: Any) -> Block:
        b = Block(seq=len(self.blocks) + 1, type=type_, tokens=tokens, **kw)
        self.blocks.append(b)
        return b

    def summary(
        self, turn_id: str = "t0", *, tokens: int = 50, covered: list[str] | None = None, **meta: Any
    ) -> Block:
        return self.add(
            SUMMARY,
            tokens=tokens,
            turn_id=turn_id,
            author="system",
            path=summary_path(turn_id),
            text="# Conversation summary\n\n## Goals / requests\n- [t0] the first goal",
            meta={"covered_turn_ids": covered or [], **meta},
        )

    def turn(
        self,
        turn_id: str,
        *,
        prompt_tokens: int = 10,
        calls: int = 0,
        call_tokens: int = 5,
        result_tokens: int = 50,
        completion_tokens: int = 20,
        header: bool = True,
        completion: bool = True,
    ) -> list[Block]:
        out: list[Block] = []
        if header:
            out.append(
                self.add(
                    TURN_HEADER, tokens=2, turn_id=turn_id, author="system", path=turn_header_path(turn_id)
                )
            )
        out.append(
            self.add(
                USER_PROMPT,
                tokens=prompt_tokens,
                turn_id=turn_id,
                author="user",
                path=user_prompt_path(turn_id),
                text=f"please do {turn_id}",
            )
        )
        for i in range(calls):
            tc = f"tc_{turn_id}_{i}"
            out.append(
                self.add(
                    TOOL_CALL,
                    tokens=call_tokens,
                    turn_id=turn_id,
                    author="assistant",
                    path=tool_call_path(turn_id, tc),
                    meta={"tool_id": "web_search"},
                )
            )
            out.append(
                self.add(
                    TOOL_RESULT,
                    tokens=result_tokens,
                    turn_id=turn_id,
                    author="tool",
                    path=tool_result_path(turn_id, tc),
                    mime="application/json",
                    text="{}",
                    meta={"tool_id": "web_search"},
                )
            )
        if completion:
            out.append(
                self.add(
                    ASSISTANT_COMPLETION,
                    tokens=completion_tokens,
                    turn_id=turn_id,
                    author="assistant",
                    path=completion_path(turn_id),
                    text=f"Done with {turn_id}. More words follow.",
                )
            )
        return out
