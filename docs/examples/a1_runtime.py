"""a1 with its contexts in the timeline service (docs/integrations.md, "a1").

Needs Python >= 3.12 with a1 and the client: `pip install './clients/python[a1]'` (in this
repository: `bash scripts/py312_env.sh` makes `.venv312`). Against `make run`:

    export TIMELINE_API_KEY=tlk_…        # the key make run printed
    PYTHONPATH=clients/python .venv312/bin/python docs/examples/a1_runtime.py

It writes with a1's own functions, then a second interpreter (a fresh runtime) reads the same
contexts back. Run by tests/integrations/test_py312.py.
"""

import os
import subprocess
import sys
import uuid

from a1 import get_context, get_runtime, new_context, set_runtime
from timeline_client import TimelineClient
from timeline_client.a1 import TimelineRuntime

client = TimelineClient(
    os.environ.get("TIMELINE_API_URL", "http://127.0.0.1:8000"), os.environ["TIMELINE_API_KEY"]
)

if len(sys.argv) > 1:  # the second process: a fresh runtime for the same conversation
    set_runtime(TimelineRuntime(client, sys.argv[1]))
    for message in get_runtime().get_full_context(["main", "attempt"]):
        print(message.role, repr(message.content), message.tool_call_id or "")
    print(sorted(get_runtime().CTX))
    sys.exit(0)

conversation = f"a1-demo-{uuid.uuid4().hex[:8]}"
set_runtime(TimelineRuntime(client, conversation))  # the one line that differs from plain a1

main = get_context("main")
main.user("What is 2+2?")
main.assistant("", tool_calls=[{"id": "call_1", "name": "calculator", "arguments": '{"a": 2, "b": 2}'}])
main.tool('{"result": 4}', name="calculator", tool_call_id="call_1")
attempt = new_context("attempt", branch_from=main)  # attempt_a: the same messages, the same ids
attempt.assistant("4")
main.assistant("4")

subprocess.run([sys.executable, __file__, conversation], check=True)
