"""An OpenAI Agents SDK agent whose history lives in the service (docs/integrations.md).

Run it with the project's interpreter against `make run`, with `OPENAI_API_KEY` set for the SDK's
default model:

    export TIMELINE_API_KEY=tlk_…        # the key make run printed
    .venv/bin/python docs/examples/openai_agents_runner.py

Run by tests/integrations/test_examples.py (against a stand-in for the Responses API).
"""

import json
import os

from agents import Agent, Runner, function_tool
from timeline_client import TimelineClient
from timeline_client.openai_agents import TimelineSession


@function_tool
def lookup_order(order: str) -> str:
    """Look an order up by its number."""
    return json.dumps({"order": order, "status": "shipped", "carrier": "DHL"})


agent = Agent(
    name="Support", instructions="Use lookup_order for questions about an order.", tools=[lookup_order]
)
client = TimelineClient(
    os.environ.get("TIMELINE_API_URL", "http://127.0.0.1:8000"), os.environ["TIMELINE_API_KEY"]
)

session = TimelineSession("support-7", client=client)
print(Runner.run_sync(agent, "Where is order 1234?", session=session).final_output)

# later, in this or any other process: the same session id continues the conversation
session = TimelineSession("support-7", client=client)
print(Runner.run_sync(agent, "Which carrier has it?", session=session).final_output)
