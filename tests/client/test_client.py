import json

import anthropic
import httpx2
import pytest
from timeline_client import TimelineAPIError, attachment, is_context_limit_error

from tests.anthropic_mock import ScriptedTransport, error, message, mock_client
from timeline_app.models import Compaction

pytestmark = pytest.mark.django_db


def test_client_drives_a_turn_and_reads_back(api):
    api.create_conversation(id="chat", title="Client", settings={"max_tokens": 20_000})
    blocks = api.start_turn(
        "chat",
        "Find a restaurant",
        turn_id="turn_1",
        attachments=[attachment("a.txt", "text/plain", text="notes")],
    )
    assert blocks[1]["path"] == "ar:turn_1.user.prompt"
    api.contribute(
        "chat",
        [
            {
                "type": "react.tool.call",
                "author": "react",
                "text": "{}",
                "meta": {"tool_call_id": "tc_1"},
                "id": "c1",
            },
            {
                "type": "react.tool.result",
                "author": "tool",
                "text": "Trattoria",
                "meta": {"tool_call_id": "tc_1"},
                "id": "r1",
            },
        ],
    )
    rendered = api.render("chat", format="text", debug=True)
    assert "Trattoria" in rendered["debug"]
    assert api.read("chat", "tc:turn_1.tc_1.result")["blocks"][0]["text"] == "Trattoria"
    api.hide("chat", "tc:turn_1.tc_1.result", "[hidden]")
    assert api.read("chat", "tc:turn_1.tc_1.result", include_hidden=False)["blocks"] == []
    assert [hit["path"] for hit in api.search("chat", "Trattoria")] == ["tc:turn_1.tc_1.result"]
    assert [s["sid"] for s in api.add_sources("chat", [{"url": "https://a.example"}])] == [1]
    assert [c["id"] for c in api.conversations()] == ["chat"]


def test_client_raises_the_service_error(api):
    with pytest.raises(TimelineAPIError) as caught:
        api.conversation("missing")
    assert caught.value.status == 404 and caught.value.code == "not_found"


def test_retry_with_compaction_renders_again_with_force_sanitize_after_the_context_limit_error(
    api, conversation
):
    from tests.factories import add_turns
    from timeline_app.models import Timeline

    add_turns(Timeline.objects.get(conversation=conversation), 6)
    transport = ScriptedTransport(
        [
            error(400, "invalid_request_error", "prompt is too long: 212000 tokens > 200000 maximum"),
            message("Here you go.", output_tokens=3),
        ]
    )
    model = mock_client(transport, max_retries=0)

    def call(rendered):
        return model.messages.create(
            model="claude-test", max_tokens=100, messages=[{"role": "user", "content": rendered["blocks"]}]
        )

    reply = api.retry_with_compaction("c1", call)

    assert reply.content[0].text == "Here you go."
    assert len(transport.bodies) == 2
    assert Compaction.objects.get().trigger == "forced"
    first, second = (json.dumps(r["messages"]) for r in transport.bodies)
    assert len(second) < len(first)
    assert "[CONVERSATION SUMMARY]" in second


def test_retry_with_compaction_lets_other_errors_through(api, conversation):
    api.start_turn("c1", "hi")

    def call(rendered):
        raise ValueError("boom")

    with pytest.raises(ValueError):
        api.retry_with_compaction("c1", call)
    assert not Compaction.objects.exists()


def test_context_limit_errors_are_recognised_from_the_sdk_exception():
    request = httpx2.Request("POST", "https://api.anthropic.com/v1/messages")
    response = httpx2.Response(
        400,
        request=request,
        json={
            "error": {"type": "invalid_request_error", "message": "prompt is too long: 5 tokens > 4 maximum"}
        },
    )
    error = anthropic.BadRequestError(
        "prompt is too long: 5 tokens > 4 maximum", response=response, body=response.json()
    )
    assert is_context_limit_error(error)
    assert not is_context_limit_error(ValueError("other"))


def test_the_operations_log_newest_first_by_kind_and_time(api):
    api.create_conversation(id="ops", settings={"max_tokens": 20_000})
    api.start_turn("ops", "Find a restaurant", turn_id="turn_1")
    for _ in range(3):
        api.hide("ops", "ar:turn_1.user.prompt", "[hidden]")
        api.unhide("ops", "ar:turn_1.user.prompt")
    entries = list(api.operations("ops"))
    assert [e["kind"] for e in entries] == ["unhidden", "hidden"] * 3 + ["context_created"]
    assert entries[0]["actor"].startswith("key:") and entries[0]["paths"] == ["ar:turn_1.user.prompt"]
    assert [e["kind"] for e in api.operations("ops", kinds=["hidden"])] == ["hidden"] * 3
    assert list(api.operations("ops", since="2100-01-01")) == []
    with pytest.raises(TimelineAPIError) as refused:
        list(api.operations("ops", kinds=["nothing_like_it"]))
    assert refused.value.status == 400 and "nothing_like_it" in str(refused.value.details)
