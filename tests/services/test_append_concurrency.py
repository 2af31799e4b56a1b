"""16 concurrent writers × 200 blocks into one timeline: nothing lost, nothing duplicated."""

import threading

from django.db import connection
from rest_framework.test import APIClient

from tests.services.races import RACES_ON_ROW_LOCKS
from timeline_app.models import Block, Timeline
from timeline_app.services.api_keys import api_key_create
from timeline_app.services.conversations import conversation_create

pytestmark = RACES_ON_ROW_LOCKS

WRITERS = 16
PER_WRITER = 200
BATCH = 20


def write_all(raw_key: str, writer: int, errors: list[str], expected: int) -> None:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw_key}")
    try:
        for start in range(0, PER_WRITER, BATCH):
            blocks = [
                {
                    "type": "react.notes",
                    "author": f"w{writer}",
                    "text": f"{writer}:{n}",
                    "id": f"w{writer}-{n}",
                }
                for n in range(start, start + BATCH)
            ]
            response = client.post("/api/v1/conversations/conc/blocks/", {"blocks": blocks}, format="json")
            if response.status_code != expected:
                errors.append(f"{response.status_code} {response.content[:200]!r}")
    finally:
        connection.close()


def run_writers(raw_key: str, *, expected: int = 201) -> list[str]:
    """Every writer's batches; the errors are the answers other than ``expected`` (201 when the
    batch stores blocks, 200 when every id of it is known: a replay)."""
    errors: list[str] = []
    threads = [
        threading.Thread(target=write_all, args=(raw_key, w, errors, expected)) for w in range(WRITERS)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors


def test_concurrent_writers_lose_and_duplicate_nothing_and_replays_add_nothing():
    key, raw = api_key_create(tenant_name="conc")
    conversation_create(tenant=key.tenant, public_id="conc")
    timeline = Timeline.objects.get(conversation__public_id="conc")

    assert run_writers(raw) == []
    rows = list(Block.objects.filter(timeline=timeline).order_by("seq").values_list("seq", "author", "text"))
    assert len(rows) == WRITERS * PER_WRITER
    assert len({seq for seq, _, _ in rows}) == len(rows)
    for writer in range(WRITERS):
        own = [int(text.split(":")[1]) for _, author, text in rows if author == f"w{writer}"]
        assert own == list(range(PER_WRITER))

    assert run_writers(raw, expected=200) == [], "a replay answers 200 and stores nothing"
    assert Block.objects.filter(timeline=timeline).count() == WRITERS * PER_WRITER
    timeline.refresh_from_db()
    assert timeline.next_seq == WRITERS * PER_WRITER + 1
