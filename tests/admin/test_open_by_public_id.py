"""Support staff paste conversation ids from tickets: the admin opens a conversation (and its
render preview) by its public id as well as by the admin's own database id."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.admin import urls
from timeline_app.models import Conversation, Tenant
from timeline_app.services.conversations import conversation_create


def _by_public_id(public_id: str, page: str = "change") -> str:
    return reverse(f"admin:timeline_app_conversation_{page}", args=[public_id])


@pytest.mark.django_db
def test_a_public_id_opens_the_conversation_page(support, compacted):
    conversation, _ = compacted
    response = support.get(_by_public_id(conversation.public_id))
    assert response.status_code == 200
    assert response.context["conversation"] == conversation
    assert response.context["sections"]


@pytest.mark.django_db
def test_a_public_id_with_a_dash_like_a_ticket_id_opens(support, tenant):
    conversation = conversation_create(tenant=tenant, public_id="demo-wuppertal", title="Wuppertal")
    response = support.get("/admin/timeline_app/conversation/demo-wuppertal/change/")
    assert response.status_code == 200
    assert response.context["conversation"] == conversation


@pytest.mark.django_db
def test_the_render_preview_opens_by_public_id(support, compacted):
    conversation, _ = compacted
    response = support.get(_by_public_id(conversation.public_id, "render"))
    assert response.status_code == 200
    assert response.context["conversation"] == conversation


@pytest.mark.django_db
def test_the_database_id_still_wins_for_the_admins_own_links(support, tenant):
    first = conversation_create(tenant=tenant, public_id="first")
    conversation_create(tenant=tenant, public_id=str(first.pk))
    response = support.get(urls.conversation(first.pk))
    assert response.context["conversation"] == first


@pytest.mark.django_db
def test_a_numeric_public_id_opens_when_no_conversation_has_that_database_id(support, tenant):
    conversation = conversation_create(tenant=tenant, public_id="987654321")
    response = support.get(_by_public_id("987654321"))
    assert response.status_code == 200
    assert response.context["conversation"] == conversation


@pytest.mark.django_db
def test_a_public_id_two_tenants_use_lists_both_to_pick_from(support, tenant):
    other = Tenant.objects.create(name="globex")
    conversation_create(tenant=tenant, public_id="shared-id")
    conversation_create(tenant=other, public_id="shared-id")
    response = support.get(_by_public_id("shared-id"), follow=True)
    assert response.redirect_chain[-1][0].endswith("/admin/timeline_app/conversation/?q=shared-id")
    assert {c.tenant.name for c in response.context["cl"].result_list} == {"acme", "globex"}
    assert "2 conversations have the id “shared-id”" in response.content.decode()


@pytest.mark.django_db
def test_an_unknown_public_id_says_it_does_not_exist(support, db):
    response = support.get(_by_public_id("no-such-conversation"), follow=True)
    assert response.redirect_chain == [("/admin/", 302)]
    assert "doesn’t exist" in response.content.decode()
    assert not Conversation.objects.exists()


@pytest.mark.django_db
def test_djangos_own_history_page_opens_by_public_id(support, compacted):
    conversation, _ = compacted
    response = support.get(_by_public_id(conversation.public_id, "history"))
    assert response.status_code == 200
    assert response.context["object"] == conversation
