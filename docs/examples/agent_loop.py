"""The native agent loop on the Anthropic Messages API, its context in the timeline service.

render (native format) → SDK call → record_reply → run the tools → record_tool_results → render.
The reply is stored as it came (thinking, notes, tool calls with their ids, the answer), with its
usage as the render's usage report; the next render sends it all back in the provider's own shape.

Run it with the project's interpreter against `make run`, as often as you like (each run starts a new
conversation):

    export TIMELINE_API_KEY=tlk_…        # the key make run printed
    export ANTHROPIC_API_KEY=sk-ant-…    # your Anthropic key
    .venv/bin/python docs/examples/agent_loop.py

Run by tests/e2e/test_python_examples.py (twice, against a stand-in for the Messages API).
"""

import os

import anthropic
from timeline_client import TimelineClient, attachment, provider_tool_name

SYSTEM = "You are a support agent. Use lookup_order before answering questions about an order."
TOOLS = [
    {
        "name": provider_tool_name("lookup_order"),  # the name the render uses for the tool
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
    kwargs = api.render(conv, format="anthropic_messages", system=SYSTEM)
    response = model.messages.create(model="claude-sonnet-5-5", max_tokens=1024, tools=TOOLS, **kwargs)
    reply = api.record_reply(conv, response, render=kwargs)
    if not reply["tool_calls"]:
        break
    api.record_tool_results(
        conv, {call["tool_call_id"]: run_tool(call["name"], call["input"]) for call in reply["tool_calls"]}
    )
print("".join(block.text for block in response.content if block.type == "text"))
