"""Random timelines in every state a history can be in (pure; ``bench formats`` and the property
tests share them): 0-30 parallel calls per round, results out of order, late, doubled or missing,
orphan results, reused and odd tool ids and names, hides, TTL prunes, compactions with split turns,
and named contexts of OpenAI messages (system messages, tool pairs broken the same ways)."""

from __future__ import annotations

import base64
import json
import random
from dataclasses import replace
from typing import Any

from timeline_app.domain import blocks as b
from timeline_app.domain.blocks import Block
from timeline_app.domain.messages import NewMessage, message_block

PNG_B64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
PDF_B64 = "JVBERi0xLjQKJcfsj6IKMSAwIG9iago8PD4+CmVuZG9iagp0cmFpbGVyCjw8Pj4KJSVFT0YK"
TOOL_NAMES = (
    "web_tools.web_search",
    "get_weather",
    "fs-read",
    "billing.lookup.v2",
    "outil_récupérer",
    "a" * 70,
    "very.long.namespace." * 4 + "tool",
)
FILLER = "lorem ipsum dolor sit amet consectetur "


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


class _Builder:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.blocks: list[Block] = []

    def add(self, **fields: Any) -> Block:
        text = fields.get("text", "")
        block = Block(seq=len(self.blocks) + 1, tokens=_tokens(text) + 8, **fields)
        self.blocks.append(block)
        return block

    def text(self, words: int) -> str:
        return (FILLER * (1 + self.rng.randint(0, words) // 6)).strip()


def _call_id(rng: random.Random, used: list[str], turn: int, k: int) -> str:
    roll = rng.random()
    if used and roll < 0.05:
        return rng.choice(used)  # a reused id
    if roll < 0.1:
        return f"tc_{turn}.{k}/odd id"
    return f"tc_{turn}_{k}_{rng.randint(0, 9999):04d}"


def seed_timeline(rng: random.Random) -> list[Block]:
    """A seed-dialect history with broken pairs, hides, a TTL prune and maybe a compaction."""
    s = _Builder(rng)
    used: list[str] = []
    deferred: list[dict[str, Any]] = []
    turns = rng.randint(1, 5)
    for t in range(turns):
        tid = f"turn_{t}"
        s.add(
            type=b.TURN_HEADER,
            turn_id=tid,
            author="system",
            ts=f"2026-01-01T00:0{t}:00Z",
            path=b.turn_header_path(tid),
        )
        s.add(
            type=b.USER_PROMPT,
            turn_id=tid,
            author="user",
            text=f"request {t}: " + s.text(30),
            path=b.user_prompt_path(tid),
        )
        kind = rng.choice(["", "", "png", "pdf", "txt"])
        if kind:
            mime = {"png": "image/png", "pdf": "application/pdf", "txt": "text/plain"}[kind]
            s.add(
                type=b.USER_ATTACHMENT,
                turn_id=tid,
                author="user",
                mime=mime,
                text="notes" if kind == "txt" else "",
                data={"png": PNG_B64, "pdf": PDF_B64, "txt": ""}[kind],
                path=b.attachment_path(tid, f"file.{kind}"),
                meta={"name": f"file.{kind}"},
            )
        for r in range(rng.randint(0, 3)):
            n = rng.choice([0, 1, 1, 2, 3, 5, rng.randint(0, 30)])
            round_results: list[dict[str, Any]] = []
            for k in range(n):
                call_id = _call_id(rng, used, t, r * 100 + k)
                used.append(call_id)
                meta = {"tool_call_id": call_id}
                if rng.random() < 0.4:
                    s.add(type=b.NOTES, turn_id=tid, author="react", text=s.text(10), meta=dict(meta))
                name = rng.choice(TOOL_NAMES)
                params: Any = {"q": s.text(5), "k": k} if rng.random() < 0.9 else ["not", "an", "object"]
                s.add(
                    type=b.TOOL_CALL,
                    turn_id=tid,
                    author="react",
                    mime="application/json",
                    text=json.dumps({"tool_id": name, "tool_call_id": call_id, "params": params}),
                    path=b.tool_call_path(tid, call_id),
                    meta=dict(meta),
                )
                fate = rng.random()
                if fate < 0.1:
                    continue  # never stored (crash, or still pending)
                count = 2 if rng.random() < 0.2 else 1
                for part in range(count):
                    binary = part == 1 and rng.random() < 0.5
                    status = "error" if rng.random() < 0.1 else "ok"
                    result = {
                        "type": b.TOOL_RESULT,
                        "turn_id": tid,
                        "author": "tool",
                        "mime": "image/png" if binary else "application/json",
                        "text": "" if binary else json.dumps({"tool_call_id": call_id, "result": s.text(40)}),
                        "data": PNG_B64 if binary else "",
                        "path": b.tool_result_path(tid, call_id) + ("" if part == 0 else f".{part}"),
                        "meta": {**meta, "status": status},
                    }
                    (deferred if fate < 0.25 else round_results).append(result)
            rng.shuffle(round_results)
            for result in round_results:
                s.add(**result)
            if deferred and rng.random() < 0.5:
                rng.shuffle(deferred)
                for result in deferred[: rng.randint(1, len(deferred))]:
                    s.add(**{**result, "turn_id": tid})
                    deferred.remove(result)
            if rng.random() < 0.1:
                s.add(type="react.user.remark", turn_id=tid, author="user", text="a remark mid-turn")
        if rng.random() < 0.1:
            orphan = f"tc_orphan_{t}"
            s.add(
                type=b.TOOL_RESULT,
                turn_id=tid,
                author="tool",
                text="orphan",
                path=b.tool_result_path(tid, orphan),
                meta={"tool_call_id": orphan},
            )
        if rng.random() < 0.7:
            s.add(
                type=b.ASSISTANT_COMPLETION,
                turn_id=tid,
                author="assistant",
                text=s.text(20),
                path=b.completion_path(tid),
            )
        if rng.random() < 0.1:
            s.add(type=b.PLAN, turn_id=tid, author="react", text='{"steps": ["a", "b"]}')
    blocks = s.blocks
    blocks = _hides(rng, blocks)
    if rng.random() < 0.4:
        blocks = _compacted(rng, blocks)
    return blocks


def _hides(rng: random.Random, blocks: list[Block]) -> list[Block]:
    """Random hides, and now and then a TTL prune of every tool result outside the last turns."""
    turns = list(dict.fromkeys(block.turn_id for block in blocks if block.turn_id))
    recent = set(turns[-rng.randint(1, 3) :]) if turns and rng.random() < 0.3 else None
    out = []
    for block in blocks:
        pruned = recent is not None and block.type == b.TOOL_RESULT and block.turn_id not in recent
        if pruned or (block.type != b.TURN_HEADER and rng.random() < 0.08):
            text = (
                f"[pruned after cache expiry] {block.path}"
                if pruned
                else rng.choice(["", "[hidden by the agent]"])
            )
            block = block.hide(
                replacement_text=text, reason="ttl" if pruned else "agent", replacement_tokens=_tokens(text)
            )
        out.append(block)
    return out


def _compacted(rng: random.Random, blocks: list[Block]) -> list[Block]:
    """``[summary] + blocks[cut:]``: covered turns before the cut, a split turn when mid-turn."""
    if len(blocks) < 3:
        return blocks
    cut = rng.randint(1, len(blocks) - 1)
    first = blocks[cut]
    covered = list(
        dict.fromkeys(
            block.turn_id for block in blocks[:cut] if block.turn_id and block.turn_id != first.turn_id
        )
    )
    meta: dict[str, Any] = {"covered_turn_ids": covered}
    if first.type != b.TURN_HEADER and first.turn_id:
        meta["split_turn_id"] = first.turn_id
        meta["split_turn_ts"] = "2026-01-01T00:00:00Z"
    text = "# Conversation summary\n" + FILLER * 4
    summary = Block(
        seq=0,
        type=b.SUMMARY,
        author="system",
        text=text,
        path="su:x.conv.range.summary",
        meta=meta,
        tokens=_tokens(text),
    )
    return [summary, *blocks[cut:]]


def named_timeline(rng: random.Random) -> list[Block]:
    """A named context of OpenAI messages: system messages, parallel tool calls, results missing,
    late or orphaned, hidden messages, and a window cut anywhere (a truncating strategy)."""
    messages: list[dict[str, Any]] = []
    if rng.random() < 0.5:
        messages.append({"role": "system", "content": "You are a helper."})
    late: list[dict[str, Any]] = []
    for turn in range(rng.randint(1, 6)):
        messages.append({"role": "user", "content": f"question {turn}: " + FILLER * rng.randint(1, 4)})
        for r in range(rng.randint(0, 3)):
            n = rng.choice([0, 1, 2, 4, rng.randint(0, 30)])
            calls = [
                {
                    "id": f"call_{turn}_{r}_{k}" if rng.random() < 0.95 else "call_dup",
                    "type": "function",
                    "function": {"name": rng.choice(TOOL_NAMES), "arguments": json.dumps({"k": k})},
                }
                for k in range(n)
            ]
            assistant: dict[str, Any] = {
                "role": "assistant",
                "content": FILLER if rng.random() < 0.5 or not calls else None,
            }
            if calls:
                assistant["tool_calls"] = calls
            messages.append(assistant)
            answers = [
                {"role": "tool", "tool_call_id": call["id"], "content": f"result {call['id']} " + FILLER}
                for call in calls
                if rng.random() > 0.1
            ]
            rng.shuffle(answers)
            for answer in answers:
                (late if rng.random() < 0.1 else messages).append(answer)
            if late and rng.random() < 0.3:
                messages.append(late.pop())
            if rng.random() < 0.05:
                messages.append({"role": "system", "content": "Mid-conversation instruction."})
            if rng.random() < 0.05:
                messages.append({"role": "tool", "tool_call_id": "call_orphan", "content": "orphan"})
        if rng.random() < 0.6:
            messages.append({"role": "assistant", "content": "answer " + FILLER})
    blocks = []
    for seq, message in enumerate(messages, start=1):
        clean = {k: v for k, v in message.items() if v is not None or k == "content"}
        new = message_block(
            NewMessage(message=clean, message_id=f"m{seq}", timestamp=f"2026-01-01T00:00:{seq % 60:02d}Z")
        )
        block = Block(
            seq=seq,
            type=new.type,
            author=new.author,
            ts=new.ts or "",
            mime=new.mime,
            text=new.text,
            path=new.path,
            meta=new.meta,
            tokens=_tokens(new.text) + 4,
        )
        if rng.random() < 0.08:
            block = block.hide(replacement_text="[hidden]", reason="agent", replacement_tokens=2)
        blocks.append(block)
    if blocks and rng.random() < 0.3:
        blocks = blocks[rng.randint(0, len(blocks) - 1) :]
    return blocks


_ASSISTANT_SIDE = frozenset({b.TOOL_CALL, b.NOTES, b.ASSISTANT_COMPLETION, b.PLAN, "message.assistant"})


def thinking_block(rng: random.Random, turn_id: str) -> Block:
    """A random ``react.thinking`` block: Anthropic thinking (signed) or redacted thinking, an
    OpenAI reasoning item (with or without encrypted content and summary), or a Gemini thought
    (signed or not) or thought signature. A history holding all three is a provider switch."""
    roll = rng.random()
    tag = rng.randint(0, 10**6)
    meta: dict[str, Any]
    if roll < 0.3:
        signature = base64.b64encode(f"gemini-signature-{tag}".encode()).decode()
        if roll < 0.15:
            text = ""
            meta = {"provider": "google", "kind": "signature", "signature": signature}
        else:
            text = f"thought {tag}: " + FILLER * rng.randint(1, 4)
            meta = {"provider": "google", "kind": "thought"}
            if rng.random() < 0.5:
                meta["signature"] = signature
        return Block(
            seq=0,
            type=b.THINKING,
            turn_id=turn_id,
            author="assistant",
            text=text,
            meta=meta,
            tokens=_tokens(text) + 4,
        )
    roll = (roll - 0.3) / 0.7
    if roll < 0.45:
        text = f"thinking {tag}: " + FILLER * rng.randint(0, 6)
        meta = {"provider": "anthropic", "kind": "thinking", "signature": f"sig{tag}=="}
    elif roll < 0.6:
        text = ""
        meta = {"provider": "anthropic", "kind": "redacted_thinking", "data": f"EmwKAhgB{tag}"}
    else:
        text = ""
        summary = [
            {"type": "summary_text", "text": f"**Step {k}** " + FILLER} for k in range(rng.randint(0, 2))
        ]
        meta = {"provider": "openai", "kind": "reasoning", "id": f"rs_{tag}", "summary": summary}
        if rng.random() < 0.8:
            meta["encrypted_content"] = f"gAAAAAB{tag}" + "x" * rng.randint(0, 40)
    return Block(
        seq=0,
        type=b.THINKING,
        turn_id=turn_id,
        author="assistant",
        text=text,
        meta=meta,
        tokens=_tokens(text) + 4,
    )


def with_thinking(rng: random.Random, blocks: list[Block]) -> list[Block]:
    """``blocks`` with thinking blocks where an agent with extended thinking stores them: before
    the first assistant-side block of a run (a call, notes, a completion), one or two; now and then
    one in an odd place (after a result, at the end) or hidden. Seqs are renumbered in order."""
    out: list[Block] = []
    previous: Block | None = None
    for block in blocks:
        opens_run = block.type in _ASSISTANT_SIDE and (
            previous is None or previous.type not in _ASSISTANT_SIDE
        )
        if opens_run and rng.random() < 0.6:
            out.extend(thinking_block(rng, block.turn_id) for _ in range(rng.choice([1, 1, 2])))
        elif rng.random() < 0.03:
            out.append(thinking_block(rng, block.turn_id))
        out.append(block)
        previous = block
    if rng.random() < 0.1:
        out.append(thinking_block(rng, out[-1].turn_id if out else ""))
    first = out[0].seq if out else 1
    renumbered = []
    for offset, block in enumerate(out):
        if block.type == b.THINKING and rng.random() < 0.05:
            block = block.hide(replacement_text="[hidden]", reason="agent", replacement_tokens=2)
        renumbered.append(replace(block, seq=first + offset))
    return renumbered


def random_timeline(rng: random.Random) -> list[Block]:
    """A seed timeline (three times in four) or a named context of OpenAI messages."""
    return named_timeline(rng) if rng.random() < 0.25 else seed_timeline(rng)
