"""Export of a context as conv.timeline.v1 JSON: operators and superusers only."""

from __future__ import annotations

import json

import pytest

from tests.admin import urls
from timeline_app.services.export import timeline_export


@pytest.mark.django_db
def test_operator_downloads_the_timeline_export(operator, compacted):
    conversation, timeline = compacted
    response = operator.get(urls.export(conversation.pk))
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/json")
    assert response["Content-Disposition"] == 'attachment; filename="conv-compacted.main.timeline.v1.json"'
    payload = json.loads(response.content)
    expected = json.loads(json.dumps(timeline_export(timeline=timeline), default=str))
    assert set(payload) == set(expected)
    assert payload.get("blocks") == expected.get("blocks")


@pytest.mark.django_db
def test_operator_sees_the_export_link(operator, compacted):
    conversation, _ = compacted
    html = operator.get(urls.conversation(conversation.pk)).content.decode()
    assert f'href="{urls.export(conversation.pk)}?context=main"' in html


@pytest.mark.django_db
def test_support_may_not_export(support, compacted):
    conversation, _ = compacted
    assert support.get(urls.export(conversation.pk)).status_code == 403
