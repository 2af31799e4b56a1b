"""Per role: support opens every page and changes nothing; operator may compact and export;
superusers too; blocks are never editable; anonymous users are sent to the login page."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.admin import urls
from timeline_app.models import Block, Compaction, Conversation, Tenant, Timeline


@pytest.fixture
def objects(compacted):
    conversation, timeline = compacted
    block = Block.objects.filter(timeline=timeline, hidden=True).order_by("seq").first()
    compaction = Compaction.objects.filter(timeline=timeline).first()
    return conversation, timeline, block, compaction


def _pages(objects) -> list[str]:
    conversation, _, block, compaction = objects
    return [
        "/admin/",
        urls.changelist("conversation"),
        urls.conversation(conversation.pk),
        urls.conversation(conversation.pk, page="2"),
        urls.render_preview(conversation.pk),
        urls.changelist("block"),
        urls.change("block", block.pk),
        urls.changelist("compaction"),
        urls.change("compaction", compaction.pk),
        urls.changelist("tenant"),
        urls.change("tenant", conversation.tenant_id),
    ]


def _state(timeline: Timeline) -> tuple:
    timeline.refresh_from_db()
    return (
        Conversation.objects.count(),
        Tenant.objects.count(),
        list(Block.objects.filter(timeline=timeline).order_by("seq").values_list("seq", "hidden", "text")),
        Compaction.objects.count(),
        timeline.cache_last_touch_at,
        timeline.version,
    )


@pytest.mark.django_db
def test_support_can_open_every_page(support, objects):
    for url in _pages(objects):
        response = support.get(url)
        assert response.status_code == 200, url


@pytest.mark.django_db
def test_support_sees_no_compaction_or_export_control(support, objects):
    conversation = objects[0]
    page = support.get(urls.conversation(conversation.pk)).content.decode()
    assert "tl-compact-form" not in page
    assert urls.compact(conversation.pk) not in page
    assert urls.export(conversation.pk) not in page
    listing = support.get(urls.changelist("conversation")).content.decode()
    assert "compact_selected" not in listing
    assert "delete_selected" not in listing


@pytest.mark.django_db
def test_support_changes_nothing_on_any_mutating_url(support, objects):
    conversation, timeline, block, compaction = objects
    before = _state(timeline)
    forbidden = [
        ("post", urls.compact(conversation.pk), {"context": "main"}),
        ("get", urls.export(conversation.pk), {}),
        ("get", urls.add("conversation"), {}),
        ("post", urls.add("conversation"), {"public_id": "x", "title": "x"}),
        ("post", urls.conversation(conversation.pk), {"title": "changed"}),
        ("get", urls.delete("conversation", conversation.pk), {}),
        ("post", urls.delete("conversation", conversation.pk), {"post": "yes"}),
        ("get", urls.add("block"), {}),
        ("post", urls.change("block", block.pk), {"text": "changed", "hidden": ""}),
        ("post", urls.delete("block", block.pk), {"post": "yes"}),
        ("post", urls.change("compaction", compaction.pk), {"status": "failed"}),
        ("post", urls.delete("compaction", compaction.pk), {"post": "yes"}),
        ("get", urls.add("tenant"), {}),
        ("post", urls.change("tenant", conversation.tenant_id), {"name": "changed"}),
        ("post", urls.delete("tenant", conversation.tenant_id), {"post": "yes"}),
        ("get", urls.changelist("apikey"), {}),
    ]
    for method, url, data in forbidden:
        response = getattr(support, method)(url, data)
        assert response.status_code == 403, (method, url, response.status_code)
    # The list's bulk actions are not offered; posting one anyway does nothing.
    response = support.post(
        urls.changelist("conversation"),
        {"action": "compact_selected", "_selected_action": [conversation.pk]},
    )
    assert response.status_code in {200, 302}
    assert _state(timeline) == before


@pytest.mark.django_db
def test_compact_url_refuses_get(operator, objects):
    assert operator.get(urls.compact(objects[0].pk)).status_code == 405


@pytest.mark.django_db
def test_operator_triggers_a_compaction_from_the_conversation_page(operator, objects):
    conversation, timeline, _, _ = objects
    page = operator.get(urls.conversation(conversation.pk)).content.decode()
    assert "tl-compact-form" in page and urls.compact(conversation.pk) in page
    applied_before = Compaction.objects.filter(timeline=timeline, status="applied").count()
    response = operator.post(urls.compact(conversation.pk), {"context": "main"}, follow=True)
    assert response.status_code == 200
    latest = Compaction.objects.filter(timeline=timeline).order_by("-id").first()
    assert latest.trigger == "manual"
    assert latest.status == "applied"
    assert Compaction.objects.filter(timeline=timeline, status="applied").count() == applied_before + 1
    # Queued as the API queues it; with eager tasks (the embedded mode) the task has run already.
    assert f"{latest.public_id}</a> of “main”: applied." in response.content.decode()


@pytest.mark.django_db
def test_operator_compaction_needs_the_csrf_token(operator_user, objects):
    client = Client(enforce_csrf_checks=True)
    client.force_login(operator_user)
    before = Compaction.objects.count()
    assert client.post(urls.compact(objects[0].pk), {"context": "main"}).status_code == 403
    assert Compaction.objects.count() == before


@pytest.mark.django_db
def test_operator_compacts_selected_conversations_from_the_list(operator, objects):
    conversation, timeline, _, _ = objects
    before = Compaction.objects.filter(timeline=timeline).count()
    response = operator.post(
        urls.changelist("conversation"),
        {"action": "compact_selected", "_selected_action": [conversation.pk]},
    )
    assert response.status_code == 302
    assert Compaction.objects.filter(timeline=timeline).count() == before + 1


@pytest.mark.django_db
def test_operator_still_cannot_edit_or_delete(operator, objects):
    conversation, timeline, block, compaction = objects
    before = _state(timeline)
    for url in (
        urls.add("conversation"),
        urls.delete("conversation", conversation.pk),
        urls.change("block", block.pk),
        urls.delete("block", block.pk),
        urls.delete("compaction", compaction.pk),
    ):
        assert operator.post(url, {"post": "yes", "text": "x"}).status_code == 403, url
    assert _state(timeline) == before


@pytest.mark.django_db
def test_superuser_sees_the_controls_but_blocks_stay_read_only(admin_client_, objects):
    conversation, timeline, block, _ = objects
    page = admin_client_.get(urls.conversation(conversation.pk)).content.decode()
    assert "tl-compact-form" in page and urls.export(conversation.pk) in page
    block_page = admin_client_.get(urls.change("block", block.pk)).content.decode()
    assert 'name="_save"' not in block_page
    before = _state(timeline)
    assert admin_client_.post(urls.change("block", block.pk), {"text": "x"}).status_code == 403
    assert admin_client_.post(urls.delete("block", block.pk), {"post": "yes"}).status_code == 403
    assert admin_client_.get(urls.add("block")).status_code == 403
    assert _state(timeline) == before


@pytest.mark.django_db
def test_anonymous_is_sent_to_the_login_page(client, objects):
    conversation, timeline, _, _ = objects
    before = _state(timeline)
    for url in _pages(objects)[1:]:
        response = client.get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith("/admin/login/"), url
    response = client.post(urls.compact(conversation.pk), {"context": "main"})
    assert response.status_code == 302 and response["Location"].startswith("/admin/login/")
    assert client.get(urls.export(conversation.pk)).status_code == 302
    assert _state(timeline) == before


@pytest.mark.django_db
def test_staff_without_any_group_signs_in_to_an_empty_index_and_every_page_is_refused(
    objects, django_user_model
):
    """What docs/admin.md says (issue 20, point 12b): the index opens (200) and says there is
    nothing to view; every model list and object page, the preview, compact and export are 403;
    an app index is a 404; the user may still change their own password."""
    user = django_user_model.objects.create_user(username="nobody", password="x", is_staff=True)
    client = Client()
    client.force_login(user)
    conversation, timeline, _, _ = objects
    before = _state(timeline)
    index = client.get("/admin/")
    assert index.status_code == 200
    assert "have permission to view or edit anything" in index.content.decode()
    for url in [*_pages(objects)[1:], urls.changelist("apikey"), "/admin/auth/user/"]:
        assert client.get(url).status_code == 403, url
    assert client.get(urls.export(conversation.pk)).status_code == 403
    assert client.post(urls.compact(conversation.pk), {"context": "main"}).status_code == 403
    assert client.get("/admin/timeline_app/").status_code == 404
    assert client.get("/admin/password_change/").status_code == 200
    assert _state(timeline) == before
