"""Issue 20: a client retrying a block id while its first request is still in flight. Several
threads send the same id with the same content at once: all succeed, one row, one seq."""

import threading

from django.db import connection
from rest_framework.test import APIClient

from tests.services.races import RACES_ON_ROW_LOCKS
from timeline_app.models import Block
from timeline_app.services.api_keys import api_key_create
from timeline_app.services.conversations import conversation_create

pytestmark = RACES_ON_ROW_LOCKS

SENDERS = 8
URL = "/api/v1/conversations/retry/blocks/"
BODY = {"blocks": [{"type": "react.notes", "author": "react", "text": "once", "id": "b-1"}]}


def send(
    raw_key: str, barrier: threading.Barrier, results: list[tuple[int, object]], body: dict = BODY
) -> None:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw_key}")
    try:
        barrier.wait()
        response = client.post(URL, body, format="json")
        ok = response.status_code < 300
        results.append(
            (response.status_code, response.json()["blocks"][0]["seq"] if ok else response.content)
        )
    except Exception as exc:  # the test client re-raises a view's exception (a 500)
        results.append((500, repr(exc)))
    finally:
        connection.close()


def test_concurrent_retries_of_one_block_id_all_succeed_with_one_row_and_one_seq():
    key, raw = api_key_create(tenant_name="retry")
    conversation_create(tenant=key.tenant, public_id="retry")
    other, other_raw = api_key_create(tenant_name="other")  # the same id elsewhere is another block
    conversation_create(tenant=other.tenant, public_id="retry")
    assert (
        APIClient(HTTP_AUTHORIZATION=f"Bearer {other_raw}").post(URL, BODY, format="json").status_code == 201
    )

    for round_ in range(3):
        Block.objects.filter(timeline__conversation__tenant=key.tenant, client_id="b-1").delete()
        results: list[tuple[int, object]] = []
        barrier = threading.Barrier(SENDERS)
        threads = [threading.Thread(target=send, args=(raw, barrier, results)) for _ in range(SENDERS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

        assert len(results) == SENDERS
        statuses = sorted(status for status, _ in results)
        assert statuses == [200] * (SENDERS - 1) + [201], results  # one created it, the others replayed
        rows = list(
            Block.objects.filter(timeline__conversation__tenant=key.tenant, client_id="b-1").values_list(
                "seq", flat=True
            )
        )
        assert len(rows) == 1, rows
        assert {seq for _, seq in results} == {rows[0]}, (round_, results, rows)
    assert Block.objects.filter(timeline__conversation__tenant=other.tenant, client_id="b-1").count() == 1


def test_concurrent_writers_of_one_block_id_with_different_texts_one_wins_the_others_409():
    """Issue 30, defect 0: decided under the timeline's lock, so exactly one text is stored, its
    writer gets 201 and every other writer a 409 (none a 200 with a text it did not send)."""
    key, raw = api_key_create(tenant_name="retry")
    conversation_create(tenant=key.tenant, public_id="retry")
    results: list[tuple[int, object]] = []
    barrier = threading.Barrier(SENDERS)
    bodies = [{"blocks": [{**BODY["blocks"][0], "text": f"writer {n}"}]} for n in range(SENDERS)]
    threads = [threading.Thread(target=send, args=(raw, barrier, results, body)) for body in bodies]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(status for status, _ in results) == [201] + [409] * (SENDERS - 1), results
    assert Block.objects.filter(timeline__conversation__tenant=key.tenant, client_id="b-1").count() == 1
