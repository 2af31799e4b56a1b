"""`timeline-mcp` driven by the MCP SDK's own client (docs/integrations.md).

Run it against `make run` with the project's virtualenv active (`timeline-mcp` must be on PATH):

    . .venv/bin/activate
    export TIMELINE_API_KEY=tlk_…        # the key make run printed
    python docs/examples/mcp_client.py

Run by tests/integrations/test_examples.py.
"""

import asyncio
import os

from mcp import ClientSession, StdioServerParameters, stdio_client
from timeline_client import TimelineClient

url = os.environ.get("TIMELINE_API_URL", "http://127.0.0.1:8000")
api = TimelineClient(url, os.environ["TIMELINE_API_KEY"])
conversation = api.create_conversation(title="MCP demo")["id"]
api.start_turn(conversation, "Find a hotel in Porto", turn_id="turn_1")
meta = {"tool_call_id": "tc_1", "tool_id": "web_search"}
api.contribute(
    conversation,
    [
        {"type": "react.tool.call", "author": "react", "text": '{"q": "hotels porto"}', "meta": meta},
        {
            "type": "react.tool.result",
            "author": "tool",
            "text": '{"hits": ["Hotel Ribeira, 95 EUR"]}',
            "meta": meta,
        },
    ],
)


async def main() -> None:
    server = StdioServerParameters(
        command="timeline-mcp",
        args=["--url", url, "--conversation", conversation],
        env={"TIMELINE_API_KEY": os.environ["TIMELINE_API_KEY"]},
    )
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        print([tool.name for tool in (await session.list_tools()).tools])
        found = await session.call_tool("timeline_search", {"query": "Ribeira"})
        print(found.content[0].text)  # the hit's path: tc:turn_1.tc_1.result
        read = await session.call_tool("timeline_read", {"path": "tc:turn_1.tc_1.result"})
        print(read.content[0].text)
        await session.call_tool(
            "timeline_hide",
            {"path": "tc:turn_1.tc_1.result", "replacement_text": "[hotel list: read tc:turn_1.tc_1.result]"},
        )
        rendered = await session.call_tool("timeline_render", {"format": "text"})
        print(rendered.content[0].text)  # shows the replacement text
        missing = await session.call_tool("timeline_read", {"path": "tc:turn_9.tc_9.result"})
        print(missing.is_error, missing.content[0].text)  # True, the service's 404 message


asyncio.run(main())
