"""Issue 12.12: listing contexts and the full context cost the same number of queries however many
contexts a conversation has; a conversation holds at most TIMELINE_MAX_CONTEXTS_PER_CONVERSATION."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.api.hostile import C, assert_error, assert_still_readable
from timeline_app.domain.messages import NewMessage, message_block
from timeline_app.models import Timeline
from timeline_app.services.blocks import blocks_append

pytestmark = pytest.mark.django_db


def add_contexts(conversation, count: int, *, start: int = 0) -> None:
    for n in range(start, start + count):
        timeline = Timeline.objects.create(
            conversation=conversation,
            name=f"attempt_{n:04d}",
            compaction_strategy={"name": "truncate_oldest", "max_messages": 1} if n % 2 else {},
        )
        messages = [
            NewMessage(
                message={"role": "user", "content": f"m{n}-{k}"},
                message_id=f"m{n}-{k}",
                timestamp=f"2026-01-01T00:{n % 60:02d}:0{k}.000000Z",
            )
            for k in range(2)
        ]
        blocks_append(timeline=timeline, blocks=[message_block(m) for m in messages])


def count_queries(caller, url: str) -> tuple[int, dict]:
    with CaptureQueriesContext(connection) as captured:
        response = caller.get(url)
    assert response.status_code == 200, response.content[:300]
    return len(captured.captured_queries), response.json()


@pytest.mark.parametrize(
    "url", [f"{C}/c1/contexts/", f"{C}/c1/full-context/", f"{C}/c1/full-context/?labels=attempt"]
)
def test_contexts_list_and_full_context_queries_do_not_grow_with_the_number_of_contexts(
    owner, conversation, url
):
    add_contexts(conversation, 3)
    few, _ = count_queries(owner, url)
    add_contexts(conversation, 27, start=3)
    many, body_many = count_queries(owner, url)
    assert many == few <= 6
    if "contexts" in body_many:
        by_name = {c["name"]: c for c in body_many["contexts"]}
        assert len(by_name) == 31
        assert by_name["attempt_0000"]["message_count"] == 2, "summarize: every message"
        assert by_name["attempt_0001"]["message_count"] == 1, "truncate_oldest keeps one"
        assert by_name["attempt_0001"]["stored_message_count"] == 2
    else:
        # 30 contexts × 2 messages, the odd ones truncated to 1.
        assert len(body_many["messages"]) == 15 * 2 + 15 * 1


def test_a_conversation_holds_at_most_the_configured_number_of_contexts(owner, conversation, settings):
    settings.TIMELINE_MAX_CONTEXTS_PER_CONVERSATION = 3  # main + 2
    assert owner.post(f"{C}/c1/contexts/", {"name": "one"}).status_code == 201
    assert (
        owner.post(
            f"{C}/c1/contexts/two/messages/", {"messages": [{"role": "user", "content": "x"}]}
        ).status_code
        == 201
    )
    before = Timeline.objects.count()
    error = assert_error(owner.post(f"{C}/c1/contexts/", {"label": "more"}), 400)
    assert "contexts" in error["details"]
    assert_error(owner.post(f"{C}/c1/contexts/four/blocks/", {"blocks": [{"type": "react.notes"}]}), 400)
    assert_error(owner.post(f"{C}/c1/contexts/", {"name": "five", "branch_from": "two"}), 400)
    assert Timeline.objects.count() == before
    assert (
        owner.post(
            f"{C}/c1/contexts/two/messages/", {"messages": [{"role": "user", "content": "y"}]}
        ).status_code
        == 201
    )
    assert_still_readable(owner, "c1")
