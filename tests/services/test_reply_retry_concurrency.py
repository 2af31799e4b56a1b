"""A client retrying ``…/replies/`` while the first request is still in flight: several threads
send the same reply (with its render's usage) at once: one stores it, the others replay it, one
set of blocks, one usage report; threads sending another body under the same response id are a
409 each, whichever wins."""

import threading

from django.db import connection
from rest_framework.test import APIClient

from tests.services.races import RACES_ON_ROW_LOCKS
from timeline_app.models import Block, RenderUsage
from timeline_app.services.api_keys import api_key_create
from timeline_app.services.conversations import conversation_create

pytestmark = RACES_ON_ROW_LOCKS

SENDERS = 6
BASE = "/api/v1/conversations/retry"


def reply(text: str) -> dict:
    return {
        "id": "msg_race",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 100, "output_tokens": 5},
    }


def send(raw_key: str, body: dict, barrier: threading.Barrier, results: list[tuple[int, str]]) -> None:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw_key}")
    try:
        barrier.wait()
        response = client.post(f"{BASE}/replies/", body, format="json")
        results.append((response.status_code, body["response"]["content"][0]["text"]))
    except Exception as exc:  # the test client re-raises a view's exception (a 500)
        results.append((500, repr(exc)))
    finally:
        connection.close()


def test_concurrent_retries_of_one_reply_store_it_once_and_report_its_usage_once():
    key, raw = api_key_create(tenant_name="retry")
    conversation_create(tenant=key.tenant, public_id="retry")
    client = APIClient(HTTP_AUTHORIZATION=f"Bearer {raw}")
    client.post(f"{BASE}/turns/", {"turn_id": "t1", "prompt": "hi"}, format="json")
    render_id = client.post(f"{BASE}/render/", {"format": "anthropic_messages"}, format="json").json()[
        "render_id"
    ]

    results: list[tuple[int, str]] = []
    barrier = threading.Barrier(SENDERS)
    bodies = [{"response": reply("Same."), "render_id": render_id}] * (SENDERS - 2) + [
        {"response": reply("Other."), "render_id": render_id}
    ] * 2
    threads = [threading.Thread(target=send, args=(raw, body, barrier, results)) for body in bodies]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert len(results) == SENDERS and all(status in (200, 201, 409) for status, _ in results), results
    created = [text for status, text in results if status == 201]
    assert len(created) == 1, results  # one body won
    winner = created[0]
    assert all(status in (200, 201) for status, text in results if text == winner), results
    assert all(status == 409 for status, text in results if text != winner), results
    texts = list(
        Block.objects.filter(conversation__public_id="retry", type="assistant.completion").values_list(
            "text", flat=True
        )
    )
    assert texts == [winner]
    assert RenderUsage.objects.filter(render_public_id=render_id).count() == 1
