"""Pure block builders for the tests of the pure core (``timeline_app/rendering``, ``compaction``).

No database: a ``Stream`` appends ``rendering.blocks.Block`` values with increasing seqs, and each
helper returns the block(s) it added. Two turn shapes:

* ``turn`` / ``summary``: every block 10 tokens, a note before each tool call, short texts (what
  the rendering tests read back);
* ``sized_turn`` / ``sized_summary``: sizes like real turns (a 2-token header, 50-token tool
  results) and the texts the extractive summarizer quotes (what the compaction tests cut and
  summarize).

Tests that write through the services use ``tests/factories.py`` instead.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

from timeline_app.domain.blocks import (
    ASSISTANT_COMPLETION,
    NOTES,
    SUMMARY,
    TOOL_CALL,
    TOOL_RESULT,
    TURN_HEADER,
    USER_ATTACHMENT,
    USER_PROMPT,
    Block,
    attachment_path,
    completion_path,
    notes_path,
    summary_path,
    tool_call_path,
    tool_result_path,
    turn_header_path,
    user_prompt_path,
)

PNG_B64 = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 32).decode()
PDF_B64 = base64.b64encode(b"%PDF-1.4\n1 0 obj << /Type /Page >> endobj\n%%EOF").decode()
TS = "2026-02-09T02:14:32.676425Z"


@dataclass
class Stream:
    """Appends blocks with increasing seqs; each helper returns the block(s) it added.

    ``ts`` is every block's time unless given (``Stream(ts="")`` leaves it empty).
    """

    blocks: list[Block] = field(default_factory=list)
    ts: str = TS

    def add(self, type: str, turn_id: str | None = None, *, tokens: int = 10, **kw: Any) -> Block:
        if turn_id is not None:
            kw["turn_id"] = turn_id
        if self.ts:
            kw.setdefault("ts", self.ts)
        block = Block(seq=len(self.blocks) + 1, type=type, tokens=tokens, **kw)
        self.blocks.append(block)
        return block

    # The rendering shape: 10 tokens a block.

    def summary(self, turn_id: str, covered: list[str], **kw: Any) -> Block:
        meta = {"covered_turn_ids": covered, **kw.pop("meta", {})}
        return self.add(SUMMARY, turn_id, path=summary_path(turn_id), text="summary text", meta=meta, **kw)

    def header(self, turn_id: str) -> Block:
        return self.add(TURN_HEADER, turn_id, author="system", path=turn_header_path(turn_id))

    def prompt(self, turn_id: str, text: str = "hello") -> Block:
        return self.add(USER_PROMPT, turn_id, author="user", text=text, path=user_prompt_path(turn_id))

    def attachment(self, turn_id: str, name: str, mime: str, data: str = "", **kw: Any) -> Block:
        return self.add(
            USER_ATTACHMENT,
            turn_id,
            author="user",
            mime=mime,
            data=data,
            path=attachment_path(turn_id, name),
            **kw,
        )

    def tool_round(
        self, turn_id: str, call_id: str, *, notes: bool = True, result_kw: Any = None
    ) -> list[Block]:
        added = []
        if notes:
            added.append(
                self.add(NOTES, turn_id, author="react", text="thinking", path=notes_path(turn_id, call_id))
            )
        added.append(
            self.add(
                TOOL_CALL,
                turn_id,
                author="react",
                mime="application/json",
                text='{"tool_id": "web_tools.web_search"}',
                path=tool_call_path(turn_id, call_id),
            )
        )
        added.append(
            self.add(
                TOOL_RESULT,
                turn_id,
                author="tool",
                mime="application/json",
                text='{"result": ["a", "b"]}',
                path=tool_result_path(turn_id, call_id),
                **(result_kw or {}),
            )
        )
        return added

    def completion(self, turn_id: str, text: str = "done") -> Block:
        return self.add(
            ASSISTANT_COMPLETION, turn_id, author="assistant", text=text, path=completion_path(turn_id)
        )

    def turn(self, turn_id: str, *, calls: int = 0, completion: bool = True) -> list[Block]:
        start = len(self.blocks)
        self.header(turn_id)
        self.prompt(turn_id)
        for k in range(calls):
            self.tool_round(turn_id, f"tc_{turn_id}_{k}")
        if completion:
            self.completion(turn_id)
        return self.blocks[start:]

    # The compaction shape: sizes like real turns, texts the extractive summarizer quotes.

    def sized_summary(
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

    def sized_turn(
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


def last_index(blocks: list[Block], turn_id: str) -> int:
    return max(i for i, b in enumerate(blocks) if b.turn_id == turn_id)
