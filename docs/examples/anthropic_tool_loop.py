"""A native Anthropic tool-use loop on the timeline service, offline.

The loop is what an agent runs against the real API: render the conversation in the provider's
own format (``format="anthropic_messages"``), call ``messages.create(**kwargs, tools=…)``, hand
the reply to ``record_reply`` (its thinking, text, tool calls and usage stored as they came), run
the tools and ``record_tool_results``, repeat. ``retry_with_compaction`` makes the call (rendering
again with ``force_sanitize`` on a context-limit error) and answers the reply with its render. Here the model
is scripted: the real ``anthropic`` SDK talks to a mocked HTTP transport, which checks every
request it gets (the SDK's request types and the provider's rules: alternation, tool_use /
tool_result pairing, ids, names, cache markers) and fails on a violation. Its answers carry the
usage a simulator of Anthropic's prompt cache bills for the exact request.

Like current Claude models, the scripted model takes no assistant prefill: a request whose last
message is the assistant's is a 400 ("This model does not support assistant message prefill. The
conversation must end with a user message."). After the last answer the agent calls the model once
more without a new question (a follow-up): the history ends with the assistant's answer, and the
render ends with a user message of the ``continue_text`` setting (``ending: continue_text``), so the
call goes through; the same render with ``prefill=True`` is refused with that 400.

Extended thinking is on: every reply starts with a signed ``thinking`` block, which
``record_reply`` stores before the reply's text and calls. Like the real API,
the scripted model rejects a request whose last assistant message holds a ``tool_use`` but does not
start with the signed thinking block it sent, unchanged.

The conversation is small on purpose (``max_tokens`` 8,000): the third turn compacts. A pause of
ten minutes before the fourth turn lets the prompt cache expire, so that render prunes old tool
results (the ``now`` render option moves the clock; nothing sleeps).

Run it against ``make run`` from the repository root::

    export TIMELINE_API_KEY=…   # manage.py create_api_key
    .venv/bin/python docs/examples/anthropic_tool_loop.py
"""

from __future__ import annotations

import json
import os
import re
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anthropic
import httpx2  # the installed anthropic SDK is built on httpx2
from timeline_client import TimelineClient, provider_tool_name

# The repository's checks of a request (not part of the client): the SDK types and the rules.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from timeline_app.rendering.native.validate import violations
from timeline_bench.provider_sim import CacheSimulator
from timeline_bench.sdk_types import sdk_type_errors

MODEL = "claude-sonnet-5-5"
SYSTEM = "You are an order-support agent. Look orders up before you answer; answer in one sentence."
DECLARED = ["orders.lookup", "orders.history"]
TOOLS = [
    {
        "name": provider_tool_name(name),
        "description": f"{name}: an order's details by its number.",
        "input_schema": {
            "type": "object",
            "properties": {"order": {"type": "string"}},
            "required": ["order"],
        },
    }
    for name in DECLARED
]
ORDER = re.compile(r"\b10\d\d\b")
QUESTIONS = ["Where is order 1001?", "And order 1002?", "Compare 1003 and 1004.", "Is 1005 late?"]
PREFILL_400 = (
    "This model does not support assistant message prefill. The conversation must end with a user message."
)


class ScriptedModel:
    """The Messages API behind a mock transport: checks each request, then answers with tool
    calls for both tools (a fan-out) on the turn's first call and with the answer on the next."""

    def __init__(self) -> None:
        self.cache = CacheSimulator()
        self.clock = 0.0  # seconds since the start, set by the loop before each call
        self.calls = 0
        self.signed: dict[str, str] = {}  # signature -> the thinking text it signs
        self.thinking_sent_back = 0  # requests whose tool_use came with its signed thinking first

    def check_thinking(self, messages: list[dict[str, Any]]) -> str:
        """The API's rule with thinking on: the last assistant message, when it holds a
        ``tool_use``, starts with a thinking block; every thinking block comes back unchanged."""
        for message in messages:
            for block in message["content"]:
                if block["type"] == "thinking" and self.signed.get(block["signature"]) != block["thinking"]:
                    return "a thinking block does not match its signature"
        assistants = [m for m in messages if m["role"] == "assistant"]
        last = assistants[-1]["content"] if assistants else []
        if any(block["type"] == "tool_use" for block in last):
            if last[0]["type"] != "thinking":
                return f"the last assistant message starts with {last[0]['type']}, not a thinking block"
            self.thinking_sent_back += 1
        return ""

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        if body["messages"] and body["messages"][-1]["role"] == "assistant":
            error = {"type": "invalid_request_error", "message": PREFILL_400}
            return httpx2.Response(400, json={"type": "error", "error": error})
        checked = {key: body[key] for key in ("system", "messages") if key in body}
        problems = violations("anthropic_messages", checked) + sdk_type_errors("anthropic_messages", checked)
        problems += [p for p in [self.check_thinking(body["messages"])] if p]
        if problems:
            raise SystemExit(f"invalid request {self.calls + 1}: {problems[0]}")
        self.calls += 1
        usage = self.cache.request(self.clock, body)
        last = body["messages"][-1]["content"]
        # Tool results to answer from, or the continue message after the last answer.
        answered = (
            any(block["type"] == "tool_result" for block in last) or last[-1].get("text") == "Continue."
        )
        # The order the conversation is about: the last order number in it (the new question's,
        # or in the results of the lookups just made).
        order = (ORDER.findall(json.dumps(body["messages"])) or ["?"])[-1]
        thought = f"Call {self.calls}: the user asks about order {order}."
        signature = f"sig-{self.calls}-{len(thought)}"
        self.signed[signature] = thought
        thinking = {"type": "thinking", "thinking": thought, "signature": signature}
        if answered:
            content = [thinking, {"type": "text", "text": f"Order {order} ships tomorrow."}]
        else:
            content = [thinking, {"type": "text", "text": f"Looking order {order} up."}] + [
                {
                    "type": "tool_use",
                    "id": f"toolu_{self.calls}_{k}",
                    "name": tool["name"],
                    "input": {"order": order},
                }
                for k, tool in enumerate(TOOLS)
            ]
        return httpx2.Response(
            200,
            json={
                "id": f"msg_{self.calls}",
                "type": "message",
                "role": "assistant",
                "model": body["model"],
                "content": content,
                "stop_reason": "end_turn" if answered else "tool_use",
                "stop_sequence": None,
                "usage": {**usage, "output_tokens": 20},
            },
        )


def run_tool(name: str, order: str) -> str:
    """A bulky tool result (about 1,200 tokens): what makes the conversation grow."""
    lines = [
        f"{name} order {order} line {i}: parcel scanned at hub {i % 7}, status in transit" for i in range(80)
    ]
    return "\n".join(lines)


api = TimelineClient(
    os.environ.get("TIMELINE_API_URL", "http://127.0.0.1:8000"), os.environ["TIMELINE_API_KEY"]
)
model = ScriptedModel()
client = anthropic.Anthropic(api_key="test", http_client=httpx2.Client(transport=httpx2.MockTransport(model)))
settings = {"max_tokens": 8000, "ttl_keep_recent_turns": 1}
conv = api.create_conversation(title="Offline tool loop", settings=settings)["id"]
start = datetime.now(UTC)

for turn, question in enumerate(QUESTIONS, start=1):
    if turn == 4:
        model.clock += 600  # ten minutes without a call: the prompt cache expires
    api.start_turn(conv, question)
    while True:
        model.clock += 5
        now = (start + timedelta(seconds=model.clock)).isoformat()
        call = api.retry_with_compaction(
            conv,
            lambda kwargs: client.messages.create(model=MODEL, max_tokens=1024, tools=TOOLS, **kwargs),
            format="anthropic_messages",
            system=SYSTEM,
            now=now,
        )
        reply = api.record_reply(conv, call, tools=DECLARED)  # its usage goes to the render it came from
        rendered = call.render.render
        if rendered["compaction"]:
            print(f"turn {turn}: the render compacted: summary at {rendered['compaction']['summary_path']}")
        if rendered["pruning"]["status"] == "pruned":
            print(
                f"turn {turn}: the cache expired, TTL pruning hid {len(rendered['pruning']['hidden_paths'])} blocks"
            )
        usage = call.reply.usage
        print(
            f"turn {turn}: {len(call.render['messages'])} messages, {rendered['tokens']['total']} tokens; "
            f"billed cache read {usage.cache_read_input_tokens}, write {usage.cache_creation_input_tokens}, "
            f"input {usage.input_tokens}"
        )
        if not reply["tool_calls"]:
            answer = "".join(block.text for block in call.reply.content if block.type == "text")
            print(f"turn {turn}: answer: {answer}")
            break
        # The fan-out: every call's result, each stored in the turn of its call.
        api.record_tool_results(
            conv, {c["tool_call_id"]: run_tool(c["name"], c["input"]["order"]) for c in reply["tool_calls"]}
        )

# A follow-up call without a new question: the history ends with the assistant's answer.
model.clock += 5
for prefill in (True, False):
    kwargs = api.render(conv, format="anthropic_messages", system=SYSTEM, prefill=prefill)
    try:
        followup = client.messages.create(model=MODEL, max_tokens=1024, tools=TOOLS, **kwargs)
    except anthropic.BadRequestError as exc:
        print(
            f"follow-up, ending {kwargs.render['ending']}: {exc.status_code} {exc.body['error']['message']}"
        )
        continue
    text = "".join(block.text for block in followup.content if block.type == "text")
    print(f"follow-up, ending {kwargs.render['ending']}: answer: {text}")

print(f"{model.thinking_sent_back} requests sent the signed thinking back first with their tool_use")
print(f"{model.calls} model calls, every request valid")
