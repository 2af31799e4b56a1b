"""What `Runner.run` does with a `TimelineSession`, step by step (docs/integrations.md).

Run it with the project's interpreter against `make run`:

    export TIMELINE_API_KEY=tlk_…        # the key make run printed
    .venv/bin/python docs/examples/openai_agents_session.py

Run by tests/integrations/test_examples.py.
"""

import asyncio
import os

from timeline_client import TimelineClient
from timeline_client.openai_agents import TimelineSession

client = TimelineClient(
    os.environ.get("TIMELINE_API_URL", "http://127.0.0.1:8000"), os.environ["TIMELINE_API_KEY"]
)


async def main() -> None:
    session = TimelineSession("orders-1234", client=client)
    await session.add_items(
        [
            {"role": "user", "content": "Where is order 1234?"},
            {
                "type": "function_call",
                "call_id": "call_1",
                "name": "lookup_order",
                "arguments": '{"order": "1234"}',
            },
            {"type": "function_call_output", "call_id": "call_1", "output": '{"status": "shipped"}'},
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "It has shipped."}],
            },
        ]
    )
    items = await session.get_items()
    print(len(items), [item.get("type", "message") for item in items])
    print(await session.get_items(limit=2))  # only the final message: the output stays with its call
    print(await session.pop_item())  # the final message, removed
    print(len(await TimelineSession("orders-1234", client=client).get_items()))  # 3, from a new object
    await session.clear_session()
    print(await session.get_items())  # []


asyncio.run(main())
