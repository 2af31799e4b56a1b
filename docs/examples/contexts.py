"""Seed 004's named-contexts example with our client (docs/contexts.md).

Run it with the project's interpreter against `make run` (each run makes a new conversation; it
writes `conversation.json` in the current directory):

    export TIMELINE_API_KEY=tlk_…        # the key make run printed
    .venv/bin/python docs/examples/contexts.py

Run by tests/e2e/test_python_examples.py (twice, live server) and tests/client/test_contexts.py.
"""

import os

from timeline_client import Context, TimelineClient, get_context, get_full_context, new_context

client = TimelineClient(
    os.environ.get("TIMELINE_API_URL", "http://127.0.0.1:8000"), os.environ["TIMELINE_API_KEY"]
)
conversation = client.create_conversation(title="Context demo")["id"]

# Get a context (the service creates it with the first message)
ctx = get_context(client, conversation)  # "main" by default

# Add messages
ctx.user("What is 2+2?")
ctx.assistant("4")

# Access messages
print(f"Total messages: {len(ctx)}")
for msg in ctx:
    print(f"{msg.role}: {msg.content}")

# An assistant tool call and its result (a missing call id is generated)
call = ctx.assistant(
    "Let me calculate", tool_calls=[{"function": {"name": "calculator", "arguments": {"a": 2, "b": 2}}}]
)
ctx.tool('{"result": 4}', name="calculator", tool_call_id=call.tool_calls[0]["id"])
ctx.system("You are a helpful assistant")

# Every message has a timestamp (datetime) and a unique id
msg = ctx.messages[-1]
print(msg.role, msg.content, msg.timestamp.isoformat(), msg.message_id)

# Labeled contexts are named automatically
attempt = new_context(client, conversation, "attempt")  # attempt_a
attempt2 = new_context(client, conversation, "attempt")  # attempt_b
intermediate = new_context(client, conversation, "intermediate")  # intermediate_a
attempt.user("Try approach A")
attempt2.user("Try approach B")
intermediate.user("Summarize the data")

# One chronological history across contexts, deduplicated by message_id
all_messages = get_full_context(client, conversation)  # every context
attempts = get_full_context(client, conversation, "attempt")  # attempt_a and attempt_b
combined = get_full_context(client, conversation, ["main", "intermediate"])
print(f"All: {len(all_messages)}, attempts: {len(attempts)}, main + intermediate: {len(combined)}")

# Persistence: save to a file, and restore with every later change mirrored at once
ctx.to_file("conversation.json")
restored = Context.from_file("conversation.json", client, conversation, "restored", keep_updated=True)
restored.user("Hello")  # stored on the service and written to conversation.json
print(f"Restored {len(restored)} messages")

# Compaction strategy of a context (the stored history stays complete)
ctx.set_strategy("truncate_oldest", max_messages=100)

# Clear the view (the messages stay stored, visible to support staff)
ctx.clear()
print(f"After clear: {len(ctx)} messages")
