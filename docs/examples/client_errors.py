"""What the client raises, and what to do about it (docs/client.md "Errors").

Run it with the Python of the environment the client is installed in, against `make run`:

    export TIMELINE_API_KEY=tlk_…        # the key make run printed
    .venv/bin/python docs/examples/client_errors.py

Run by tests/integrations/test_client_distribution.py (in a virtualenv holding only the client).
"""

import os

from timeline_client import TimelineAPIError, TimelineClient, TimelineUnavailable

KEY = os.environ["TIMELINE_API_KEY"]
api = TimelineClient(os.environ.get("TIMELINE_API_URL", "http://127.0.0.1:8000"), KEY)
nowhere = TimelineClient("http://127.0.0.1:9", KEY, retries=1)  # nothing listens on port 9


def contribute_or_report(api: TimelineClient, conv: str, blocks: list[dict]) -> str:
    try:
        api.contribute(conv, blocks)
    except TimelineUnavailable as exc:  # no answer: exc.maybe_processed says whether it may be stored
        return f"unavailable (maybe processed: {exc.maybe_processed}): retry, the ids store nothing twice"
    except TimelineAPIError as exc:  # the service answered 4xx/5xx in its one error shape
        return f"refused: {exc.status} {exc.code}"
    return "stored"


conv = api.create_conversation(title="Errors example")["id"]
api.start_turn(conv, "Where is order 1234?")
note = [{"type": "react.notes", "text": "Looking the order up.", "id": "note-1"}]
print(contribute_or_report(api, conv, note))
print(contribute_or_report(api, "no-such-conversation", note))
print(contribute_or_report(nowhere, conv, note))
