"""``POST …/messages/pop/`` and the OpenAI Agents session's ``pop_item`` on top of it: one item
leaves the view, nothing else is written, the others keep their ids and timestamps."""

from __future__ import annotations

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from timeline_client import TimelineClient
from timeline_client.openai_agents import TimelineSession

from tests.api.contexts.conftest import messages_url
from timeline_app.models import Block, Timeline

pytestmark = pytest.mark.django_db

BLOCK_TABLE = Block._meta.db_table


def items(n: int, word: str) -> list[dict]:
    """``n`` SDK items in groups of four: a question, a call, its output, an answer."""
    out: list[dict] = []
    for i in range(n // 4):
        call_id = f"call_{word}_{i}"
        out += [
            {"role": "user", "content": f"{word} question {i}"},
            {"type": "function_call", "call_id": call_id, "name": "lookup", "arguments": f'{{"i": {i}}}'},
            {"type": "function_call_output", "call_id": call_id, "output": f"{word} result {i}"},
            {
                "id": f"msg_{word}_{i}",
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": f"{word} answer {i}", "annotations": []}],
            },
        ]
    return out


def block_rows(timeline: Timeline) -> dict[int, tuple]:
    return {
        seq: rest
        for seq, *rest in Block.objects.filter(timeline=timeline).values_list(
            "seq", "client_id", "ts", "meta", "hidden", "hidden_reason", "replacement_text"
        )
    }


def writes(queries: list[dict], verb: str) -> list[str]:
    return [
        q["sql"] for q in queries if q["sql"].lstrip().upper().startswith(verb) and BLOCK_TABLE in q["sql"]
    ]


def test_pop_on_a_300_item_session_hides_one_block_and_rewrites_nothing(api, owner, outsider, wsgi_http):
    session = TimelineSession("big", client=api)
    mine = items(300, "mine")
    session.add_items_sync(mine)
    # planted: a branch of main in the same conversation (same message ids) one message longer,
    # and another tenant's conversation of the same id, longer still
    api.transport.request(
        "POST", "/api/v1/conversations/big/contexts/", json={"name": "attempt_a", "branch_from": "main"}
    )
    TimelineSession("big", client=api, context="attempt_a").add_items_sync([{"role": "user", "content": "a"}])
    theirs = items(304, "theirs")
    outsider_api = TimelineClient("http://testserver", outsider.raw_key, http_client=wsgi_http)
    TimelineSession("big", client=outsider_api).add_items_sync(theirs)
    main = Timeline.objects.get(conversation__tenant=owner.tenant, conversation__public_id="big", name="main")
    others = list(Timeline.objects.exclude(pk=main.pk))
    assert len(others) == 2
    listed_before = api.transport.request("GET", "/api/v1/conversations/big/messages/")["messages"]
    rows_before = block_rows(main)
    others_before = {t.pk: block_rows(t) for t in others}

    with CaptureQueriesContext(connection) as captured:
        popped = session.pop_item_sync()

    assert popped == mine[-1]
    assert writes(captured.captured_queries, "INSERT") == [], "no row is appended again"
    assert writes(captured.captured_queries, "DELETE") == []
    assert len(writes(captured.captured_queries, "UPDATE")) == 1, "one statement hides the popped block"
    assert len(captured.captured_queries) <= 12, [q["sql"] for q in captured.captured_queries]
    rows_after = block_rows(main)
    assert len(rows_after) == len(rows_before) == 300, "the popped message stays stored"
    changed = {seq for seq in rows_before if rows_after[seq] != rows_before[seq]}
    assert changed == {max(rows_before)}, "only the popped message's block changed"
    assert rows_after[max(rows_before)][3:] == [True, "popped", ""]
    assert {t.pk: block_rows(t) for t in others} == others_before, "other contexts and tenants untouched"

    listed_after = api.transport.request("GET", "/api/v1/conversations/big/messages/")["messages"]
    assert listed_after == listed_before[:-1], "same message ids and timestamps, one fewer"
    assert session.get_all_items_sync() == mine[:-1]
    assert session.get_items_sync() == mine[:-1], "the render leaves the popped item out too"
    assert TimelineSession("big", client=api, context="attempt_a").get_all_items_sync() == [
        *mine,
        {"role": "user", "content": "a"},
    ]
    assert TimelineSession("big", client=outsider_api).get_all_items_sync() == theirs

    # popping again takes the next newest: the output; its call waits for one, as in the SDK
    assert session.pop_item_sync() == mine[-2]
    assert session.get_all_items_sync() == mine[:-2]


def test_pop_over_http_answers_the_popped_message_and_keeps_it_stored(owner, outsider, conversation):
    url = messages_url("notes")
    assert owner.post(f"{url}pop/").status_code == 404, "no such context yet"
    sent = [{"role": "user", "content": "keep me", "message_id": "m1"}, {"role": "user", "content": "pop me"}]
    stored = owner.post(url, {"messages": sent}).json()["messages"]
    assert outsider.post(f"{url}pop/").status_code == 404, "another tenant's context"

    answer = owner.post(f"{url}pop/")
    assert answer.status_code == 200 and answer.json() == {"messages": [stored[1]]}
    assert owner.get(url).json()["messages"] == [stored[0]]
    info = owner.get("/api/v1/conversations/c1/contexts/notes/").json()
    assert (info["message_count"], info["stored_message_count"]) == (1, 2)
    rendered = owner.post("/api/v1/conversations/c1/contexts/notes/render/", {"format": "text"}).json()
    shown = json.dumps(rendered["blocks"])
    assert "keep me" in shown and "pop me" not in shown, "the render leaves it out"
    read = owner.get(
        "/api/v1/conversations/c1/contexts/notes/blocks/", path=f"ar:msg.{stored[1]['message_id']}"
    )
    assert read.status_code == 200, "still readable by path"

    again = owner.post(url, {"messages": [{**sent[1], "message_id": stored[1]["message_id"]}]})
    assert again.status_code == 409 and again.json()["error"]["code"] == "conflict"
    assert owner.get(url).json()["messages"] == [stored[0]], "a popped id sent again changes nothing"

    assert owner.post(f"{url}pop/").json() == {"messages": [stored[0]]}
    assert owner.post(f"{url}pop/").json() == {"messages": []}, "an empty view pops nothing"
    owner.post(url, {"messages": [{"role": "user", "content": "after"}]})
    owner.delete(url)
    assert owner.post(f"{url}pop/").json() == {"messages": []}, "a cleared message is not popped"
