"""Issue 21: creating a context with its branch copy is one transaction; a failed copy leaves no
empty context behind."""

from __future__ import annotations

import pytest

from timeline_app.errors import Conflict
from timeline_app.models import Block, Tenant, Timeline
from timeline_app.services import contexts
from timeline_app.services.contexts import context_create
from timeline_app.services.conversations import conversation_create
from timeline_app.services.messages import messages_append, parse_messages

from .conftest import BASE, messages_url


class CopyFailed(Exception):
    pass


def _failing_copy(**kwargs):
    raise CopyFailed("the copy failed after the context row was created")


@pytest.mark.django_db(transaction=True)
def test_a_branch_whose_copy_fails_leaves_no_context(monkeypatch):
    """Committed for real (no test transaction around it): the service is its own transaction."""
    tenant = Tenant.objects.create(name="acme")
    conversation = conversation_create(tenant=tenant, public_id="c1")
    main = Timeline.objects.get(conversation=conversation, name="main")
    messages_append(timeline=main, messages=parse_messages([{"role": "user", "content": "q1"}]))
    monkeypatch.setattr(contexts, "blocks_append", _failing_copy)

    with pytest.raises(CopyFailed):
        context_create(conversation=conversation, label="attempt", branch_from="main")

    assert list(Timeline.objects.values_list("name", flat=True)) == ["main"]
    # The label's next name is still the first one, and a branch works once the copy does.
    monkeypatch.undo()
    branch = context_create(conversation=conversation, label="attempt", branch_from="main")
    assert branch.name == "attempt_a"
    assert Block.objects.filter(timeline=branch).count() == 1


@pytest.mark.django_db
def test_a_branch_whose_copy_is_refused_answers_the_error_and_creates_nothing(
    owner, conversation, monkeypatch
):
    owner.post(messages_url(), {"messages": [{"role": "user", "content": "q1"}]})

    def refused(**kwargs):
        raise Conflict("the context is full: no seq left for these blocks")

    monkeypatch.setattr(contexts, "blocks_append", refused)
    response = owner.post(f"{BASE}/contexts/", {"label": "attempt", "branch_from": "main"})
    assert response.status_code == 409, response.json()
    assert list(Timeline.objects.values_list("name", flat=True)) == ["main"]
