"""A native Anthropic tool-use loop on the timeline service, offline.

The loop is what an agent runs against the real API: render the conversation in the provider's
own format (``format="anthropic_messages"``), call ``messages.create(**kwargs, tools=…)``, store
the model's tool calls, the tools' results and the final answer as blocks, repeat. Here the model
is scripted: the real ``anthropic`` SDK talks to a mocked HTTP transport, which checks every
request it gets (the SDK's request types and the provider's rules: alternation, tool_use /
tool_result pairing, ids, names, cache markers) and fails on a violation. Its answers carry the
usage a simulator of Anthropic's prompt cache bills for the exact request.

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
from timeline_client import TimelineClient, provider_tool_name, timeline_tool_name

# The repository's checks of a request (not part of the client): the SDK types and the rules.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from timeline_app.benchmarks.provider_sim import CacheSimulator
from timeline_app.benchmarks.sdk_types import sdk_type_errors
from timeline_app.rendering.native.validate import violations

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


class ScriptedModel:
    """The Messages API behind a mock transport: checks each request, then answers with tool
    calls for both tools (a fan-out) on the turn's first call and with the answer on the next."""

    def __init__(self) -> None:
        self.cache = CacheSimulator()
        self.clock = 0.0  # seconds since the start, set by the loop before each call
        self.calls = 0

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        checked = {key: body[key] for key in ("system", "messages") if key in body}
        problems = violations("anthropic_messages", checked) + sdk_type_errors("anthropic_messages", checked)
        if problems:
            raise SystemExit(f"invalid request {self.calls + 1}: {problems[0]}")
        self.calls += 1
        usage = self.cache.request(self.clock, body)
        last = body["messages"][-1]["content"]
        answered = any(block["type"] == "tool_result" for block in last)
        # The order the conversation is about: the last order number in it (the new question's,
        # or in the results of the lookups just made).
        order = (ORDER.findall(json.dumps(body["messages"])) or ["?"])[-1]
        if answered:
            content = [{"type": "text", "text": f"Order {order} ships tomorrow."}]
        else:
            content = [{"type": "text", "text": f"Looking order {order} up."}] + [
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
        kwargs = api.render(conv, format="anthropic_messages", system=SYSTEM, now=now)
        rendered = kwargs.render
        if rendered["compaction"]:
            print(f"turn {turn}: the render compacted: summary at {rendered['compaction']['summary_path']}")
        if rendered["pruning"]["status"] == "pruned":
            print(
                f"turn {turn}: the cache expired, TTL pruning hid {len(rendered['pruning']['hidden_paths'])} blocks"
            )
        reply = client.messages.create(model="claude-sonnet-4-5", max_tokens=1024, tools=TOOLS, **kwargs)
        usage = reply.usage
        print(
            f"turn {turn}: {len(kwargs['messages'])} messages, {rendered['tokens']['total']} tokens; "
            f"billed cache read {usage.cache_read_input_tokens}, write {usage.cache_creation_input_tokens}, "
            f"input {usage.input_tokens}"
        )
        texts = [block.text for block in reply.content if block.type == "text"]
        calls = [block for block in reply.content if block.type == "tool_use"]
        if not calls:
            api.contribute(
                conv,
                [
                    {
                        "type": "assistant.completion",
                        "author": "assistant",
                        "text": "".join(texts),
                        "id": f"{reply.id}.done",
                    }
                ],
            )
            print(f"turn {turn}: answer: {''.join(texts)}")
            break
        blocks: list[dict[str, Any]] = [
            {"type": "react.notes", "author": "react", "text": "".join(texts), "id": f"{reply.id}.notes"}
        ]
        for call in calls:  # the fan-out: every call, then every result
            name = timeline_tool_name(call.name, declared=DECLARED)
            meta = {"tool_call_id": call.id, "tool_id": name}
            blocks.append(
                {
                    "type": "react.tool.call",
                    "author": "react",
                    "mime": "application/json",
                    "text": json.dumps({"tool_id": name, "params": call.input}),
                    "meta": meta,
                    "id": f"{call.id}.call",
                }
            )
        for call in calls:
            name = timeline_tool_name(call.name, declared=DECLARED)
            blocks.append(
                {
                    "type": "react.tool.result",
                    "author": "tool",
                    "mime": "text/plain",
                    "text": run_tool(name, call.input["order"]),
                    "meta": {"tool_call_id": call.id, "tool_id": name},
                    "id": f"{call.id}.result",
                }
            )
        api.contribute(conv, blocks)

print(f"{model.calls} model calls, every request valid")
