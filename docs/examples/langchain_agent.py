"""A LangChain v1 agent whose memory is the timeline service (docs/integrations.md, "LangChain").

Needs Python >= 3.10 with LangChain and the client: `pip install './clients/python[langchain]'`
(in this repository `.venv312`, made by `bash scripts/py312_env.sh`, has it). Against `make run`:

    export TIMELINE_API_KEY=tlk_…        # the key make run printed
    PYTHONPATH=clients/python .venv312/bin/python docs/examples/langchain_agent.py

With ANTHROPIC_API_KEY set (and langchain-anthropic installed) it asks Claude; without, a scripted
stand-in model plays the model's part (one tool call, then an answer), offline. Two runs of the agent:
the second knows the first, from the service. Run by tests/integrations/test_py312.py.
"""

import os
import uuid
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from timeline_client import TimelineClient
from timeline_client.langchain import TimelineMiddleware


@tool
def lookup_order(order: str) -> str:
    """Where an order is."""
    return f"Order {order} shipped on 2026-11-20 with DHL."


class StandIn(BaseChatModel):
    """Calls lookup_order once, then answers from the tool's result (what a model would do)."""

    @property
    def _llm_type(self) -> str:
        return "stand-in"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self

    def _generate(
        self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        usage = {
            "input_tokens": 50 * len(messages),
            "output_tokens": 12,
            "total_tokens": 50 * len(messages) + 12,
        }
        meta = {"model_name": "stand-in-1"}
        if isinstance(messages[-1], ToolMessage):
            reply = AIMessage(content=f"{messages[-1].text}", usage_metadata=usage, response_metadata=meta)
        else:
            call = {"id": f"call_{len(messages)}", "name": "lookup_order", "args": {"order": "1234"}}
            reply = AIMessage(content="", tool_calls=[call], usage_metadata=usage, response_metadata=meta)
        return ChatResult(generations=[ChatGeneration(message=reply)])


if os.environ.get("ANTHROPIC_API_KEY"):
    from langchain_anthropic import ChatAnthropic

    model: BaseChatModel = ChatAnthropic(model="claude-sonnet-5-5")
else:
    model = StandIn()

client = TimelineClient(
    os.environ.get("TIMELINE_API_URL", "http://127.0.0.1:8000"), os.environ["TIMELINE_API_KEY"]
)
conversation = f"langchain-demo-{uuid.uuid4().hex[:8]}"
memory = TimelineMiddleware(client, conversation)  # the one line: middleware=[memory]
agent = create_agent(model, [lookup_order], system_prompt="You answer order questions.", middleware=[memory])

agent.invoke({"messages": [{"role": "user", "content": "Where is order 1234?"}]})
# a new run, no state passed: the model still gets the first run from the service
result = agent.invoke({"messages": [{"role": "user", "content": "And which carrier?"}]})
print(result["messages"][-1].text)
for message in memory.context.messages:
    print(message.role, message.tool_call_id or "", (message.content or "")[:60])
print("reported renders:", client.usage(conversation)["renders"])
