import base64

import anthropic.types
import openai.types.chat
import pytest
from pydantic import TypeAdapter

from tests.factories import add_turns
from timeline_app.models import Block, Timeline

pytestmark = pytest.mark.django_db
BASE = "/api/v1/conversations/c1"
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 32).decode()


def start_turn(owner, turn_id="turn_a", **extra):
    return owner.post(f"{BASE}/turns/", {"turn_id": turn_id, "prompt": "Find food", **extra})


def test_start_turn_writes_header_prompt_and_attachments_with_seed_paths(owner, conversation):
    attachments = [{"name": "menu.png", "mime": "image/png", "base64": PNG, "summary": "the menu"}]
    response = start_turn(owner, attachments=attachments)
    assert response.status_code == 201
    blocks = response.json()["blocks"]
    assert [b["type"] for b in blocks] == ["turn.header", "user.prompt", "user.attachment"]
    assert blocks[1]["path"] == "ar:turn_a.user.prompt"
    assert blocks[2]["path"] == "fi:turn_a.user.attachments/menu.png"
    assert blocks[2]["meta"]["physical_path"] == "turn_a/attachments/menu.png"
    again = start_turn(owner, attachments=attachments).json()["blocks"]
    assert [b["seq"] for b in again] == [b["seq"] for b in blocks], (
        "starting the same turn again adds nothing"
    )
    assert Block.objects.count() == 3


def test_render_anthropic_parts_validate_against_the_sdk_types(owner, conversation):
    start_turn(owner, attachments=[{"name": "menu.png", "mime": "image/png", "base64": PNG}])
    owner.post(
        f"{BASE}/blocks/", {"blocks": [{"type": "react.notes", "author": "react", "text": "thinking"}]}
    )
    body = owner.post(f"{BASE}/render/", {"include_announce": True, "announce": ["budget: 2 calls"]}).json()
    message = {"role": "user", "content": body["blocks"]}
    TypeAdapter(anthropic.types.MessageParam).validate_python(message)
    assert any(part["type"] == "image" for part in body["blocks"])
    assert body["cache_points"] and all("cache_control" in body["blocks"][i] for i in body["cache_points"])
    assert "cache_control" not in body["blocks"][-1], "the announce tail is never cached"
    assert body["pruning"] == {"status": "armed", "hidden_paths": []}
    assert body["compaction"] is None


def test_render_openai_messages_validate_against_the_sdk_types(owner, conversation):
    start_turn(owner, attachments=[{"name": "menu.png", "mime": "image/png", "base64": PNG}])
    body = owner.post(f"{BASE}/render/", {"format": "openai"}).json()
    TypeAdapter(list[openai.types.chat.ChatCompletionMessageParam]).validate_python(body["blocks"])
    assert body["cache_points"] == []


def test_render_text_format_marks_cache_points(owner, conversation):
    start_turn(owner)
    body = owner.post(f"{BASE}/render/", {"format": "text", "debug": True}).json()
    assert "[TURN turn_a]" in body["debug"] and "[USER MESSAGE]" in body["debug"]
    assert "=>[1]" in body["debug"]


def test_ttl_pruning_hides_old_tool_results_only_when_the_cache_is_cold(owner, conversation):
    conversation.settings = {"ttl_keep_recent_turns": 2}
    conversation.save()
    add_turns(Timeline.objects.get(conversation=conversation), 4)
    first = owner.post(f"{BASE}/render/", {"now": "2026-01-01T00:00:00Z"}).json()
    assert first["pruning"]["status"] == "armed"
    warm = owner.post(f"{BASE}/render/", {"now": "2026-01-01T00:04:00Z"}).json()
    assert warm["pruning"] == {"status": "fresh", "hidden_paths": []}
    cold = owner.post(
        f"{BASE}/render/", {"now": "2026-01-01T00:20:00Z", "format": "text", "debug": True}
    ).json()
    assert cold["pruning"]["status"] == "pruned"
    assert set(cold["pruning"]["hidden_paths"]) == {
        "tc:turn_1.tc_1x0.result",
        "tc:turn_1.tc_1x1.result",
        "tc:turn_2.tc_2x0.result",
        "tc:turn_2.tc_2x1.result",
    }
    assert cold["tokens"]["visible"] < warm["tokens"]["visible"]
    assert "tc:turn_1.tc_1x0.result" in cold["debug"]
    stored = Block.objects.get(path="tc:turn_1.tc_1x0.result")
    assert stored.hidden and stored.hidden_reason == "ttl" and stored.text, "hidden, never rewritten"
    again = owner.post(f"{BASE}/render/", {"now": "2026-01-01T00:40:00Z"}).json()
    assert again["pruning"] == {"status": "no_effect", "hidden_paths": []}


def test_render_with_small_max_tokens_compacts_and_reports_it(owner, conversation):
    add_turns(Timeline.objects.get(conversation=conversation), 8)
    body = owner.post(f"{BASE}/render/", {"max_tokens": 4_000, "system": "You are helpful."}).json()
    assert body["compaction"]["summary_path"].startswith("su:")
    assert body["compaction"]["covered_turn_ids"][0] == "turn_1"
    assert body["compaction"]["after_tokens"] < body["compaction"]["before_tokens"]
    assert body["tokens"]["total"] <= 4_000 and body["tokens"]["system"] > 0


def test_contribution_filters_apply_to_history_and_current_turn(owner, conversation):
    add_turns(Timeline.objects.get(conversation=conversation), 2)
    body = owner.post(
        f"{BASE}/render/", {"format": "text", "debug": True, "exclude_contributions": ["react.notes"]}
    ).json()
    assert "searching 0" not in body["debug"]
    body = owner.post(
        f"{BASE}/render/",
        {"format": "text", "debug": True, "include_only_contributions": ["assistant.completion"]},
    ).json()
    assert "react.tool.call" not in body["debug"] and "Answer 2." in body["debug"]


def test_active_plan_is_announced_not_persisted(owner, conversation):
    start_turn(owner)
    owner.post(
        f"{BASE}/blocks/",
        {
            "blocks": [
                {
                    "type": "react.plan",
                    "author": "react",
                    "mime": "application/json",
                    "text": '{"steps": ["a", "b"]}',
                }
            ]
        },
    )
    body = owner.post(f"{BASE}/render/", {"format": "text", "debug": True, "include_announce": True}).json()
    assert "[ACTIVE PLAN]" in body["debug"]
    assert Block.objects.filter(type="react.plan").count() == 1


@pytest.mark.parametrize(
    "payload",
    [
        {"format": "xml"},
        {"max_tokens": -1},
        {"max_tokens": 10**12},
        {"max_tokens": "100"},
        {"cache_last": "yes"},
        {"system": "x", "system_tokens": 3},
        {"now": "soon"},
        {"announce": "not a list"},
        {"surprise": 1},
    ],
)
def test_bad_render_input_is_400_and_changes_nothing(owner, conversation, payload):
    start_turn(owner)
    timeline = Timeline.objects.get(conversation=conversation)
    response = owner.post(f"{BASE}/render/", payload)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid"
    timeline.refresh_from_db()
    assert timeline.cache_last_touch_at is None


def render_queries(owner, turns: int) -> int:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from tests.factories import add_turn

    timeline = Timeline.objects.get(conversation__public_id="c1")
    start = Block.objects.filter(timeline=timeline, type="turn.header").count() + 1
    for number in range(start, start + turns):
        add_turn(timeline, number)
    with CaptureQueriesContext(connection) as captured:
        assert (
            owner.post(f"{BASE}/render/", {"include_sources": True, "include_announce": True}).status_code
            == 200
        )
    return len(captured)


def test_render_query_count_does_not_grow_with_the_timeline(owner, conversation):
    small = render_queries(owner, 2)
    assert render_queries(owner, 10) == small
    # 12 reads and writes, and recording the render: SAVEPOINT (a transaction outside tests), lock
    # the timeline row, INSERT, trim in one DELETE, RELEASE; and one for the usage forecast's
    # recent cache entries (issue 23).
    assert small <= 17


def test_replayed_blocks_are_not_tokenized_again(owner, conversation, monkeypatch):
    from timeline_app.services import blocks as block_services

    payload = {"blocks": [{"type": "react.notes", "text": "note", "id": "n-1"}]}
    owner.post(f"{BASE}/blocks/", payload)
    calls = []
    monkeypatch.setattr(block_services, "stored_costs", lambda value: calls.append(value) or (1, 0))
    again = owner.post(f"{BASE}/blocks/", payload).json()["blocks"][0]
    assert calls == [] and again["tokens"] > 1
