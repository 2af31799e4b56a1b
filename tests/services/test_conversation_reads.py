"""The constant-statement reads of ``selectors.conversations`` (``timeline_of``, ``api_key_lookup``):
hand-written SQL, so each filter is tested with the other tenant's matching row planted first
(the statements take the lowest id, so a lost filter would answer the other's row)."""

from __future__ import annotations

import pytest

from timeline_app import selectors
from timeline_app.services.contexts import context_create
from timeline_app.services.conversations import conversation_create

pytestmark = pytest.mark.django_db


def test_timeline_of_answers_only_the_tenants_own_conversation_of_that_id(owner, outsider):
    theirs = conversation_create(tenant=outsider.tenant, public_id="c1")
    context_create(conversation=theirs, name="attempt_a")
    ours = conversation_create(tenant=owner.tenant, public_id="c1")
    ours_a = context_create(conversation=ours, name="attempt_a")

    found = selectors.timeline_of(tenant=owner.tenant, public_id="c1", name="attempt_a")

    assert found is not None and found.pk == ours_a.pk
    assert found.conversation.pk == ours.pk and found.conversation.tenant_id == owner.tenant.pk
    main = selectors.timeline_of(tenant=owner.tenant, public_id="c1", name="main")
    assert main is not None and main.conversation_id == ours.pk and main.name == "main"
    assert selectors.timeline_of(tenant=owner.tenant, public_id="c1", name="attempt_b") is None
    assert selectors.timeline_of(tenant=owner.tenant, public_id="c2", name="main") is None


def test_api_key_lookup_answers_the_key_of_that_value_with_its_own_tenant(outsider, owner):
    # ``outsider``'s key is made first (the lower id).
    key = selectors.api_key_lookup(raw_key=owner.raw_key)
    assert key is not None and key.tenant_id == owner.tenant.pk and key.tenant.pk == owner.tenant.pk
    assert selectors.api_key_lookup(raw_key="tlk_not_a_key") is None
