"""A scripted OpenAI Agents SDK model and agent for the ``TimelineSession`` tests.

Imported by the test, and run as ``python -m tests.integrations.scripted_agent`` for the fresh
process that continues a session: it imports no Django (the integration must not need it).

The model answers "Where is order N?" with a reasoning item and a ``lookup_order`` call (two
parallel calls when N is a multiple of 4), and a tool output with a final assistant message
quoting every output of the turn. Every id derives from N, so two runs over different sessions
produce the same items, and the SDK's own ``SQLiteSession`` serves as the reference store.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from agents import (
    Agent,
    Model,
    ModelResponse,
    Runner,
    SQLiteSession,
    Usage,
    function_tool,
    set_tracing_disabled,
)
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
    ResponseReasoningItem,
)
from openai.types.responses.response_reasoning_item import Summary
from timeline_client import TimelineClient
from timeline_client.openai_agents import TimelineSession

set_tracing_disabled(True)

QUESTION = re.compile(r"Where is order (\d+)\?")


def question(order: int) -> str:
    return f"Where is order {order}?"


@function_tool
def lookup_order(order: int) -> str:
    """Look an order up by its number."""
    return json.dumps(
        {
            "order": order,
            "status": "shipped" if order % 2 else "packed",
            "note": f"wombat{order} parcel depot",
        }
    )


def _order_of(items: list[Any]) -> int:
    for item in reversed(items):
        if item.get("role") == "user" and isinstance(item.get("content"), str):
            match = QUESTION.search(item["content"])
            if match:
                return int(match.group(1))
    raise AssertionError("no question in the model input")


class ScriptedModel(Model):
    """Canned responses; ``inputs`` records what the model was given on every call."""

    def __init__(self) -> None:
        self.inputs: list[list[dict[str, Any]]] = []

    async def get_response(
        self,
        system_instructions: str | None,
        input: str | list[Any],
        model_settings: Any,
        tools: list[Any],
        output_schema: Any,
        handoffs: list[Any],
        tracing: Any,
        *,
        previous_response_id: str | None,
        conversation_id: str | None,
        prompt: Any,
    ) -> ModelResponse:
        items = [{"role": "user", "content": input}] if isinstance(input, str) else [dict(i) for i in input]
        self.inputs.append(json.loads(json.dumps(items)))
        assert [t.name for t in tools] == ["lookup_order"]
        order = _order_of(items)
        last = items[-1]
        if last.get("type") == "function_call_output":
            outputs = [i["output"] for i in items if i.get("type") == "function_call_output"]
            calls = 2 if order % 4 == 0 else 1
            text = f"Order {order}: " + " | ".join(outputs[-calls:])
            output: list[Any] = [
                ResponseOutputMessage(
                    id=f"msg_{order}",
                    type="message",
                    role="assistant",
                    status="completed",
                    content=[ResponseOutputText(type="output_text", text=text, annotations=[])],
                )
            ]
        else:
            output = [
                ResponseReasoningItem(
                    id=f"rs_{order}",
                    type="reasoning",
                    summary=[Summary(type="summary_text", text=f"Look order {order} up.")],
                ),
                ResponseFunctionToolCall(
                    id=f"fc_{order}_a",
                    call_id=f"call_{order}_a",
                    type="function_call",
                    name="lookup_order",
                    arguments=json.dumps({"order": order}),
                    status="completed",
                ),
            ]
            if order % 4 == 0:
                output.append(
                    ResponseFunctionToolCall(
                        id=f"fc_{order}_b",
                        call_id=f"call_{order}_b",
                        type="function_call",
                        name="lookup_order",
                        arguments=json.dumps({"order": order + 1000}),
                        status="completed",
                    )
                )
        return ModelResponse(output=output, usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError("the scripted model answers Runner.run only, not streamed runs")


def build_agent(model: ScriptedModel) -> Agent:
    return Agent(name="clerk", instructions="Answer order questions.", model=model, tools=[lookup_order])


async def run_turns(agent: Agent, sessions: list[Any], orders: range) -> list[str]:
    """One ``Runner.run`` per order on each session (the same model script); the final outputs."""
    finals = []
    for order in orders:
        for session in sessions:
            result = await Runner.run(agent, question(order), session=session)
            finals.append(str(result.final_output))
    return finals


async def continue_in_fresh_process(
    url: str, key: str, session_id: str, first: int, expected_path: Path, out_path: Path
) -> None:
    """The second process: a new session object with the same id sees the full history and
    continues it for four more turns, beside a SQLiteSession holding the same history."""
    expected = json.loads(expected_path.read_text())
    with TimelineClient(url, key) as client:
        session = TimelineSession(session_id, client=client)
        restored = await session.get_items()
        assert restored == expected, "the fresh session sees the full history, exactly"
        reference = SQLiteSession(session_id, str(out_path.with_suffix(".sqlite3")))
        await reference.add_items(expected)
        model = ScriptedModel()
        agent = build_agent(model)
        await run_turns(agent, [session], range(first, first + 4))
        reference_model = ScriptedModel()
        await run_turns(build_agent(reference_model), [reference], range(first, first + 4))
        assert model.inputs[0][:-1] == expected, "the model got the whole earlier history"
        assert model.inputs == reference_model.inputs
        items = await session.get_items()
        assert items == await reference.get_items()
        out_path.write_text(
            json.dumps(
                {"items": items, "django_imported": "django" in sys.modules, "calls": len(model.inputs)}
            )
        )


if __name__ == "__main__":
    url, key, session_id, first, expected, out = sys.argv[1:7]
    asyncio.run(continue_in_fresh_process(url, key, session_id, int(first), Path(expected), Path(out)))
