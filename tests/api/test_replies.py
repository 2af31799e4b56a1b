"""``…/replies/`` and ``…/tool-results/``: a provider's reply stored as it came (blocks, tool
calls, usage), idempotent by its response id; results by call id in their call's turn. Every
refusal is a 400 (or 409) in the one error shape that names the field, with nothing stored."""

from __future__ import annotations

import base64

import pytest

from timeline_app.models import Block, RenderUsage

pytestmark = pytest.mark.django_db
C = "/api/v1/conversations"
BASE = f"{C}/c1"
SIGNATURE = "EqQBCkgIARABGAIiQL-signature=="


def message(msg_id: str = "msg_1", *, content=None, usage=None, stop_reason="tool_use") -> dict:
    return {
        "id": msg_id,
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": content
        if content is not None
        else [
            {"type": "thinking", "thinking": "Look both orders up.", "signature": SIGNATURE},
            {"type": "text", "text": "Looking them up."},
            {"type": "tool_use", "id": "toolu_a", "name": "orders-2elookup", "input": {"order": "1001"}},
            {"type": "tool_use", "id": "toolu_b", "name": "orders-2elookup", "input": {"order": "1002"}},
        ],
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": usage or {"input_tokens": 1200, "output_tokens": 40},
    }


def stored(conv: str = "c1") -> list[tuple[str, str, str]]:
    return list(
        Block.objects.filter(conversation__public_id=conv)
        .order_by("seq")
        .values_list("type", "author", "text")
    )


@pytest.fixture
def turn(owner, conversation):
    assert (
        owner.post(f"{BASE}/turns/", {"turn_id": "t1", "prompt": "Where are 1001 and 1002?"}).status_code
        == 201
    )
    return "t1"


def test_an_anthropic_reply_is_stored_as_thinking_notes_and_calls_in_the_current_turn(owner, turn):
    answer = owner.post(f"{BASE}/replies/", {"response": message()})

    assert answer.status_code == 201, answer.json()
    body = answer.json()
    assert [b["type"] for b in body["blocks"]] == [
        "react.thinking",
        "react.notes",
        "react.tool.call",
        "react.tool.call",
    ]
    assert {b["turn_id"] for b in body["blocks"]} == {"t1"}
    assert body["blocks"][0]["meta"]["signature"] == SIGNATURE
    assert body["tool_calls"] == [
        {
            "tool_call_id": "toolu_a",
            "name": "orders.lookup",
            "provider_name": "orders-2elookup",
            "input": {"order": "1001"},
        },
        {
            "tool_call_id": "toolu_b",
            "name": "orders.lookup",
            "provider_name": "orders-2elookup",
            "input": {"order": "1002"},
        },
    ]
    assert body["blocks"][2]["path"] == "tc:t1.toolu_a.call"
    assert body["usage"] is None and body["format"] == "anthropic" and body["response_id"] == "msg_1"


def test_a_reply_without_calls_is_the_turns_completion(owner, turn):
    reply = message(content=[{"type": "text", "text": "Both ship tomorrow."}], stop_reason="end_turn")
    body = owner.post(f"{BASE}/replies/", {"response": reply}).json()
    assert [(b["type"], b["author"], b["path"]) for b in body["blocks"]] == [
        ("assistant.completion", "assistant", "ar:t1.assistant.completion")
    ]
    assert body["tool_calls"] == []


def test_the_same_reply_again_stores_nothing_twice_and_another_body_under_its_id_is_a_409(owner, turn):
    first = owner.post(f"{BASE}/replies/", {"response": message()})
    again = owner.post(f"{BASE}/replies/", {"response": message()})
    assert (first.status_code, again.status_code) == (201, 200)
    assert [b["seq"] for b in again.json()["blocks"]] == [b["seq"] for b in first.json()["blocks"]]
    before = stored()

    other = message(content=[{"type": "text", "text": "Something else."}], stop_reason="end_turn")
    conflict = owner.post(f"{BASE}/replies/", {"response": other})

    assert conflict.status_code == 409, conflict.json()
    assert "response.id" in conflict.json()["error"]["details"]
    assert stored() == before


def test_with_its_render_id_the_usage_is_the_renders_report_in_the_same_write(owner, turn):
    render = owner.post(f"{BASE}/render/", {"format": "anthropic_messages"}).json()
    answer = owner.post(f"{BASE}/replies/", {"response": message(), "render_id": render["render_id"]})

    assert answer.status_code == 201, answer.json()
    usage = answer.json()["usage"]
    assert usage["render_id"] == render["render_id"] and usage["tokens"]["output"] == 40
    assert RenderUsage.objects.count() == 1
    # The same reply again replays both the blocks and the report.
    again = owner.post(f"{BASE}/replies/", {"response": message(), "render_id": render["render_id"]})
    assert again.status_code == 200 and RenderUsage.objects.count() == 1


def gemini_response(response_id: str = "gem_1") -> dict:
    """A GenerateContentResponse as the REST API sends it: camelCase, standard base64."""
    return {
        "responseId": response_id,
        "modelVersion": "gemini-2.5-flash",
        "candidates": [
            {
                "content": {
                    "role": "model",
                    "parts": [
                        {"text": "Look it up.", "thought": True},
                        {
                            "functionCall": {
                                "id": "fc_1",
                                "name": "orders-2elookup",
                                "args": {"order": "1001"},
                            },
                            "thoughtSignature": "+vv8/f7/",
                        },
                    ],
                }
            }
        ],
        "usageMetadata": {
            "promptTokenCount": 1200,
            "cachedContentTokenCount": 200,
            "candidatesTokenCount": 30,
            "thoughtsTokenCount": 10,
            "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 1200}],
        },
    }


def test_a_gemini_reply_reports_its_usage_as_post_usage_reads_it(owner, turn):
    render = owner.post(f"{BASE}/render/", {"format": "gemini_contents"}).json()
    answer = owner.post(f"{BASE}/replies/", {"response": gemini_response(), "render_id": render["render_id"]})

    assert answer.status_code == 201, answer.json()
    usage = answer.json()["usage"]
    assert usage["provider"] == "google" and usage["priced_model"] == "gemini-2.5-flash"
    assert usage["tokens"] == {
        "uncached_input": 1000,
        "cache_read": 200,
        "cache_write_5m": 0,
        "cache_write_1h": 0,
        "output": 40,
    }
    assert [b["meta"].get("provider") for b in answer.json()["blocks"][:2]] == ["google", "google"]
    # The same call reported on POST …/usage/ in the SDK's snake_case, without the modality
    # details: the same report (a replay), not a 409.
    snake = {
        "prompt_token_count": 1200,
        "cached_content_token_count": 200,
        "candidates_token_count": 30,
        "thoughts_token_count": 10,
    }
    reported = owner.post(
        f"{BASE}/renders/{render['render_id']}/usage/", {"usage": snake, "model": "gemini-2.5-flash"}
    )
    assert reported.status_code == 200, reported.json()
    assert RenderUsage.objects.count() == 1
    other = owner.post(
        f"{BASE}/renders/{render['render_id']}/usage/",
        {"usage": {**snake, "candidates_token_count": 31}, "model": "gemini-2.5-flash"},
    )
    assert other.status_code == 409


def test_an_unknown_render_stores_nothing_not_even_the_blocks(owner, turn):
    before = stored()
    answer = owner.post(f"{BASE}/replies/", {"response": message(), "render_id": "rnd_unknown"})
    assert answer.status_code == 404
    assert stored() == before and not RenderUsage.objects.exists()


def test_a_usage_the_render_cannot_take_stores_nothing(owner, turn):
    render = owner.post(f"{BASE}/render/", {"format": "anthropic_messages"}).json()
    before = stored()
    bad = message(usage={"input_tokens": -1, "output_tokens": 1})
    answer = owner.post(f"{BASE}/replies/", {"response": bad, "render_id": render["render_id"]})
    assert answer.status_code == 400 and "usage" in str(answer.json()["error"]["details"])
    assert stored() == before and not RenderUsage.objects.exists()


@pytest.mark.parametrize(
    ("response", "field"),
    [
        ({"hello": "world"}, "response"),
        ({**message(), "id": ""}, "response.id"),
        (message(content=[{"type": "tool_use", "name": "x", "input": {}}]), "response.content[0].id"),
        (
            {
                "object": "chat.completion",
                "id": "c1",
                "choices": [
                    {
                        "message": {
                            "role": "assistant",
                            "tool_calls": [
                                {
                                    "id": "call_1",
                                    "type": "function",
                                    "function": {"name": "f", "arguments": "{not json"},
                                }
                            ],
                        }
                    }
                ],
            },
            "response.choices[0].message.tool_calls[0].function.arguments",
        ),
        (message(content=[{"type": "thinking", "thinking": "x"}]), "blocks[0].meta.signature"),
    ],
)
def test_a_reply_that_is_no_reply_or_has_a_malformed_part_is_a_400_naming_it(owner, turn, response, field):
    before = stored()
    answer = owner.post(f"{BASE}/replies/", {"response": response})
    assert answer.status_code == 400, answer.json()
    assert field in answer.json()["error"]["details"], answer.json()
    assert stored() == before


def test_a_part_too_large_to_store_is_a_400_and_stores_nothing(owner, turn, settings):
    settings.TIMELINE_MAX_META_BYTES = 2_000
    big = message(
        content=[{"type": "redacted_thinking", "data": "x" * 3_000}, {"type": "text", "text": "ok"}]
    )
    before = stored()
    answer = owner.post(f"{BASE}/replies/", {"response": big})
    assert answer.status_code == 400 and "blocks[0].meta" in answer.json()["error"]["details"]
    assert stored() == before


def test_a_text_over_the_block_limit_is_a_400_on_both_writes_and_stores_nothing(owner, turn, settings):
    owner.post(f"{BASE}/replies/", {"response": message()})
    settings.TIMELINE_MAX_BLOCK_TEXT_CHARS = 100
    before = stored()
    long_reply = message("msg_2", content=[{"type": "text", "text": "x" * 101}], stop_reason="end_turn")
    answer = owner.post(f"{BASE}/replies/", {"response": long_reply})
    assert answer.status_code == 400 and "blocks[0].text" in answer.json()["error"]["details"]
    result = owner.post(
        f"{BASE}/tool-results/", {"results": [{"tool_call_id": "toolu_a", "output": "y" * 101}]}
    )
    assert result.status_code == 400 and "results[0].output" in result.json()["error"]["details"]
    assert stored() == before


def test_named_contexts_take_replies_too(owner, conversation):
    answer = owner.post(f"{BASE}/contexts/attempt_a/replies/", {"response": message()})
    assert answer.status_code == 201
    assert Block.objects.filter(timeline__name="attempt_a", type="react.tool.call").count() == 2
    assert not Block.objects.filter(timeline__name="main").exists()


def test_another_tenants_conversation_is_a_404(outsider, owner, turn):
    assert outsider.post(f"{BASE}/replies/", {"response": message()}).status_code == 404
    assert (
        outsider.post(
            f"{BASE}/tool-results/", {"results": [{"tool_call_id": "toolu_a", "output": "x"}]}
        ).status_code
        == 404
    )


# ---------------------------------------------------------------- tool results


def test_results_land_in_their_calls_turn_with_errors_marked_json_and_images(owner, turn):
    owner.post(f"{BASE}/replies/", {"response": message()})
    owner.post(f"{BASE}/turns/", {"turn_id": "t2", "prompt": "meanwhile, another question"})
    png = base64.b64encode(b"\x89PNG\r\n\x1a\nfake").decode()

    answer = owner.post(
        f"{BASE}/tool-results/",
        {
            "results": [
                {
                    "tool_call_id": "toolu_b",
                    "output": {"status": "late"},
                    "images": [{"mime": "image/png", "base64": png}],
                },
                {"tool_call_id": "toolu_a", "output": "no such order", "is_error": True},
            ]
        },
    )

    assert answer.status_code == 201, answer.json()
    blocks = answer.json()["blocks"]
    assert [(b["turn_id"], b["mime"], b["meta"]["tool_call_id"]) for b in blocks] == [
        ("t1", "application/json", "toolu_b"),
        ("t1", "image/png", "toolu_b"),
        ("t1", "text/plain", "toolu_a"),
    ]
    assert blocks[0]["text"] == '{"status": "late"}' and blocks[1]["base64"] == png
    assert blocks[2]["meta"] == {
        "tool_call_id": "toolu_a",
        "tool_id": "orders.lookup",
        "status": "error",
        "is_error": True,
    }
    assert blocks[2]["path"] == "tc:t1.toolu_a.result"
    again = owner.post(
        f"{BASE}/tool-results/",
        {"results": [{"tool_call_id": "toolu_a", "output": "no such order", "is_error": True}]},
    )
    assert again.status_code == 200 and again.json()["blocks"][0]["seq"] == blocks[2]["seq"]
    changed = owner.post(
        f"{BASE}/tool-results/", {"results": [{"tool_call_id": "toolu_a", "output": "found it"}]}
    )
    assert changed.status_code == 409


def test_a_result_for_an_unknown_call_is_a_400_naming_it_and_stores_nothing(owner, turn, outsider):
    owner.post(f"{BASE}/replies/", {"response": message()})
    # The other tenant's call of the same id does not make it known here.
    outsider_conv = outsider.post(f"{C}/", {"id": "c1"})
    assert outsider_conv.status_code == 201
    outsider.post(f"{C}/c1/turns/", {"prompt": "x"})
    outsider.post(
        f"{C}/c1/replies/",
        {
            "response": message(
                "msg_x", content=[{"type": "tool_use", "id": "toolu_theirs", "name": "f", "input": {}}]
            )
        },
    )
    before = stored()

    answer = owner.post(
        f"{BASE}/tool-results/",
        {
            "results": [
                {"tool_call_id": "toolu_a", "output": "ok"},
                {"tool_call_id": "toolu_theirs", "output": "x"},
            ]
        },
    )

    assert answer.status_code == 400
    details = answer.json()["error"]["details"]
    assert (
        list(details) == ["results[1].tool_call_id"] and "toolu_theirs" in details["results[1].tool_call_id"]
    )
    assert stored() == before


def test_the_same_call_answered_twice_in_one_request_is_a_400(owner, turn):
    owner.post(f"{BASE}/replies/", {"response": message()})
    before = stored()
    answer = owner.post(
        f"{BASE}/tool-results/",
        {"results": [{"tool_call_id": "toolu_a", "output": "1"}, {"tool_call_id": "toolu_a", "output": "2"}]},
    )
    assert answer.status_code == 400 and "results" in answer.json()["error"]["details"]
    assert stored() == before


# ---------------------------------------------------------------- malformed blocks on every write path


@pytest.mark.parametrize(
    ("block", "field"),
    [
        ({"type": "react.tool.call", "author": "react", "text": "{}"}, "blocks[1].meta.tool_call_id"),
        (
            {"type": "react.tool.result", "text": "ok", "meta": {"tool_call_id": ""}},
            "blocks[1].meta.tool_call_id",
        ),
    ],
)
def test_the_blocks_api_refuses_a_block_that_lacks_what_its_type_needs(owner, turn, block, field):
    before = stored()
    good = {"type": "react.notes", "text": "fine"}
    answer = owner.post(f"{BASE}/blocks/", {"blocks": [good, block]})
    assert answer.status_code == 400
    assert field in answer.json()["error"]["details"], answer.json()
    assert stored() == before


def test_a_well_known_type_without_author_gets_its_documented_default_shown_in_the_answer(owner, turn):
    answer = owner.post(
        f"{BASE}/blocks/",
        {
            "blocks": [
                {"type": "react.notes", "text": "thinking aloud"},
                {"type": "react.tool.call", "text": "{}", "meta": {"tool_call_id": "tc_1"}},
                {"type": "react.tool.result", "text": "ok", "path": "tc:t1.tc_1.result"},
                {"type": "assistant.completion", "text": "done"},
                {"type": "my.custom", "author": "  ", "text": "rendered on the user's side"},
            ]
        },
    )
    assert answer.status_code == 201, answer.json()
    authors = ["react", "react", "tool", "assistant", "user"]
    assert [b["author"] for b in answer.json()["blocks"]] == authors
    assert [row[1] for row in stored()[-5:]] == authors


def test_the_import_refuses_a_block_that_lacks_what_its_type_needs(owner, turn):
    export = owner.get(f"{BASE}/timeline/").json()
    export["blocks"].append(
        {
            **export["blocks"][-1],
            "seq": 99,
            "id": None,
            "type": "react.tool.call",
            "author": "",
            "meta": {},
            "path": "",
        }
    )
    before = Block.objects.count()
    answer = owner.post(f"{C}/import/", {**export, "id": "c2"})
    assert answer.status_code == 400, answer.json()
    assert f"blocks[{len(export['blocks']) - 1}].meta.tool_call_id" in answer.json()["error"]["details"]
    assert Block.objects.count() == before


def test_a_call_of_the_same_id_in_another_context_or_tenant_is_unknown_here(owner, turn, outsider):
    """The calls are looked up in this context only: the same ``tool_call_id`` stored by another
    context of the conversation, or by another tenant's conversation of the same id, is a 400 here
    and the result never lands in their turn."""
    assert owner.post(f"{BASE}/contexts/attempt_a/replies/", {"response": message()}).status_code == 201
    assert outsider.post(f"{C}/", {"id": "c1"}).status_code == 201
    outsider.post(f"{C}/c1/turns/", {"turn_id": "t9", "prompt": "x"})
    assert outsider.post(f"{C}/c1/replies/", {"response": message("msg_x")}).status_code == 201
    assert Block.objects.filter(type="react.tool.call", meta__tool_call_id="toolu_a").count() == 2

    answer = owner.post(f"{BASE}/tool-results/", {"results": [{"tool_call_id": "toolu_a", "output": "ok"}]})

    assert answer.status_code == 400, answer.json()
    details = answer.json()["error"]["details"]
    assert list(details) == ["results[0].tool_call_id"] and "toolu_a" in details["results[0].tool_call_id"]
    assert not Block.objects.filter(type="react.tool.result").exists()
    # In the context that made the call, the result lands in that context's turn only.
    there = owner.post(
        f"{BASE}/contexts/attempt_a/tool-results/",
        {"results": [{"tool_call_id": "toolu_a", "output": "ok"}]},
    )
    assert there.status_code == 201, there.json()
    ours = Block.objects.get(type="react.tool.call", meta__tool_call_id="toolu_a", timeline__name="attempt_a")
    results = Block.objects.filter(type="react.tool.result")
    assert [(r.timeline_id, r.turn_id) for r in results] == [(ours.timeline_id, ours.turn_id)]
