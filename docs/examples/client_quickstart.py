"""The Python client in a few lines (clients/python/README.md, README.md).

Run it with the Python of any environment the client is installed into (`pip install
./clients/python`, or the project's `.venv`), against `make run`:

    export TIMELINE_API_KEY=tlk_…        # the key make run printed
    .venv/bin/python docs/examples/client_quickstart.py

Run by tests/integrations/test_client_distribution.py, in a virtualenv holding only the client.
"""

import os

from timeline_client import TimelineClient

api = TimelineClient(
    os.environ.get("TIMELINE_API_URL", "http://127.0.0.1:8000"), os.environ["TIMELINE_API_KEY"]
)
conv = api.create_conversation(title="Client example")["id"]
api.start_turn(conv, "Where is order 1234?")
api.contribute(conv, [{"type": "react.notes", "text": "Looking the order up."}])
context = api.render(conv)
print(context["tokens"]["visible"], "visible tokens in", len(context["blocks"]), "parts")
