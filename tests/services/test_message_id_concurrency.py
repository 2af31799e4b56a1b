"""Issue 12.10: concurrent sends of one message_id with different content: exactly one 201, the
rest 409, one row stored, and the stored message is the one that got the 201."""

import threading

from django.db import connection
from rest_framework.test import APIClient

from tests.services.races import RACES_ON_ROW_LOCKS
from timeline_app.models import Block
from timeline_app.services.api_keys import api_key_create
from timeline_app.services.conversations import conversation_create

pytestmark = RACES_ON_ROW_LOCKS

SENDERS = 8
URL = "/api/v1/conversations/race/contexts/work/messages/"


def send(raw_key: str, n: int, barrier: threading.Barrier, results: list[tuple[int, int, str]]) -> None:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw_key}")
    try:
        barrier.wait()
        body = {"messages": [{"role": "user", "content": f"version {n}", "message_id": "m-1"}]}
        response = client.post(URL, body, format="json")
        results.append((n, response.status_code, response.content.decode()))
    finally:
        connection.close()


def test_concurrent_sends_of_one_message_id_with_different_content_store_one_and_409_the_rest():
    key, raw = api_key_create(tenant_name="race")
    conversation_create(tenant=key.tenant, public_id="race")
    # The context exists first: the race is on the message, not on creating the context.
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert (
        client.put(
            URL.replace("messages/", ""), {"compaction_strategy": {"name": "summarize"}}, format="json"
        ).status_code
        == 200
    )

    for _ in range(3):
        Block.objects.filter(client_id="msg:m-1").delete()
        results: list[tuple[int, int, str]] = []
        barrier = threading.Barrier(SENDERS)
        threads = [threading.Thread(target=send, args=(raw, n, barrier, results)) for n in range(SENDERS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

        statuses = sorted(status for _, status, _ in results)
        assert statuses == [201] + [409] * (SENDERS - 1), results
        winner = next(n for n, status, _ in results if status == 201)
        assert all('"code":"conflict"' in body for _, status, body in results if status == 409)
        rows = list(Block.objects.filter(client_id="msg:m-1").values_list("meta", flat=True))
        assert len(rows) == 1
        assert rows[0]["openai_message"]["content"] == f"version {winner}"
