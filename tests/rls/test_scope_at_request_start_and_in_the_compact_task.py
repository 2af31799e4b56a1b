"""Row-level security as the application role, where a tenant setting could outlive its request
or reach past its task (issue 30):

* a connection left with a tenant set (a request whose finish hook never ran) is cleared when the
  next request starts: an anonymous request and a non-staff user's admin request see no row;
* the compact task runs scoped to its timeline's tenant only: while it summarizes, another
  tenant's conversation with the same public id is invisible to it, with every tenant filter of
  its queries stripped (``rls_support.task_alone``). This file is in the database-alone pass
  (``tests/rls`` in scripts/rls_tests.txt)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.test import Client, override_settings
from django.urls import include, path

from compaction.summary import ExtractiveSummarizer
from tests import rls_support
from tests.factories import fill_to
from tests.services.compaction.helpers import make_timeline
from tests.services.compaction.summarizers import use
from timeline_app import tenancy
from timeline_app.domain.blocks import Block as BlockValue
from timeline_app.models import Block, Compaction, Conversation
from timeline_app.tasks import compact_timeline

pytestmark = pytest.mark.django_db


def probe(request: HttpRequest) -> JsonResponse:
    """What a request's queries see of the tenant tables, through the whole middleware stack."""
    return JsonResponse(
        {
            "conversations": sorted(Conversation.objects.values_list("public_id", flat=True)),
            "blocks": Block.objects.count(),
        }
    )


urlpatterns = [path("probe/", probe), path("admin/probe/", probe), path("", include("config.urls"))]


@pytest.fixture
def persistent():
    """Persistent connections (``CONN_MAX_AGE`` > 0, production's setting): one connection serves
    request after request, so what one left set is there when the next starts."""
    before = connection.settings_dict["CONN_MAX_AGE"]
    connection.settings_dict["CONN_MAX_AGE"] = 600
    yield
    connection.settings_dict["CONN_MAX_AGE"] = before


@pytest.fixture
def non_staff(db) -> Client:
    client = Client()
    client.force_login(User.objects.create_user("visitor", password="x" * 20))
    return client


@override_settings(ROOT_URLCONF=__name__)
@pytest.mark.parametrize(("who", "url"), [("anonymous", "/probe/"), ("non_staff", "/admin/probe/")])
def test_a_tenant_left_on_the_connection_is_cleared_when_the_next_request_starts(
    two_tenants, non_staff, persistent, app_role, who, url
):
    client = Client() if who == "anonymous" else non_staff
    tenancy.tenant_set(two_tenants.mine.caller.tenant.pk)  # a request whose finish hook never ran
    assert Conversation.objects.count() == 2, "the left-over setting shows acme's rows"

    seen = client.get(url)

    assert seen.status_code == 200, seen.content
    assert seen.json() == {"conversations": [], "blocks": 0}
    assert rls_support.current_settings() == ("", "", "")


class Watching(ExtractiveSummarizer):
    """The extractive summarizer, noting which conversations and blocks its task's queries see."""

    name = "watching"

    def __init__(self) -> None:
        self.seen: list[tuple[list[tuple[str, int]], set[int]]] = []

    def summarize(
        self, *, blocks: Sequence[BlockValue], previous_summary: str | None, max_tokens: int, purpose: Any
    ) -> str:
        conversations = sorted(Conversation.objects.values_list("public_id", "tenant_id"))
        timelines = set(Block.objects.values_list("timeline_id", flat=True))
        self.seen.append((conversations, timelines))
        return super().summarize(
            blocks=blocks, previous_summary=previous_summary, max_tokens=max_tokens, purpose=purpose
        )


def test_the_compact_task_sees_its_timelines_tenant_only(_app_role):
    mine = make_timeline(tenant="acme", public_id="c1")
    fill_to(mine, 3_800, 4_500)
    theirs = make_timeline(tenant="globex", public_id="c1")  # the same public id, over the threshold
    fill_to(theirs, 3_800, 4_500)
    theirs_blocks = Block.objects.filter(timeline=theirs).count()

    with use(Watching()) as watching, rls_support.task_alone():
        result = compact_timeline(mine.pk, "manual", True)

    assert result["status"] == "applied", result
    assert watching.seen, "the task summarized"
    for conversations, timelines in watching.seen:
        assert conversations == [("c1", mine.conversation.tenant_id)]
        assert timelines == {mine.pk}
    assert Compaction.objects.filter(timeline=theirs).count() == 0
    assert Block.objects.filter(timeline=theirs).count() == theirs_blocks
