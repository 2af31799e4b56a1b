"""An agent loop on the Anthropic Messages API whose context lives in the timeline service.

Run it with the project's interpreter against `make run`, as often as you like (each run starts a new
conversation):

    export TIMELINE_API_KEY=tlk_…        # the key make run printed
    export ANTHROPIC_API_KEY=sk-ant-…    # your Anthropic key
    .venv/bin/python docs/examples/agent_loop.py

Run by tests/e2e/test_python_examples.py (twice, against a stand-in for the Messages API).
"""

import json
import os

import anthropic
from timeline_client import TimelineClient, attachment

SYSTEM = "You are a support agent. Use lookup_order before answering questions about an order."
TOOLS = [
    {
        "name": "lookup_order",
        "description": "Look an order up by its number.",
        "input_schema": {
            "type": "object",
            "properties": {"order": {"type": "string"}},
            "required": ["order"],
        },
    }
]


def run_tool(name: str, arguments: dict) -> dict:
    return {"order": arguments["order"], "status": "delivered", "refundable_until": "2026-12-01"}


api = TimelineClient(
    os.environ.get("TIMELINE_API_URL", "http://127.0.0.1:8000"), os.environ["TIMELINE_API_KEY"]
)
model = anthropic.Anthropic()  # reads ANTHROPIC_API_KEY
conv = api.create_conversation(title="Refund question")["id"]  # a new id each run

receipt = attachment("receipt.txt", "text/plain", text="Order 1234, 2026-11-02: headphones, 89.00 EUR")
api.start_turn(conv, "Can I get a refund for order 1234?", attachments=[receipt])
while True:
    reply = api.retry_with_compaction(
        conv,
        lambda ctx: model.messages.create(
            model="claude-sonnet-5-5",
            max_tokens=1024,
            system=SYSTEM,
            messages=[{"role": "user", "content": ctx["blocks"]}],
            tools=TOOLS,
        ),
        include_sources=True,
        include_announce=True,
        system=SYSTEM,
    )
    tool_use = next((part for part in reply.content if part.type == "tool_use"), None)
    if tool_use is None:
        answer = "".join(part.text for part in reply.content if part.type == "text")
        api.contribute(
            conv,
            [
                {
                    "type": "assistant.completion",
                    "author": "assistant",
                    "text": answer,
                    "id": f"{reply.id}.done",
                }
            ],
        )
        print(answer)
        break
    call_id = f"tc_{tool_use.id}"
    result = run_tool(tool_use.name, tool_use.input)
    api.contribute(
        conv,
        [
            {
                "type": "react.tool.call",
                "author": "react",
                "mime": "application/json",
                "text": json.dumps(tool_use.input),
                "meta": {"tool_call_id": call_id, "tool_id": tool_use.name},
                "id": f"{call_id}.call",
            },
            {
                "type": "react.tool.result",
                "author": "tool",
                "mime": "application/json",
                "text": json.dumps(result),
                "meta": {"tool_call_id": call_id, "tool_id": tool_use.name},
                "id": f"{call_id}.result",
            },
        ],
    )
