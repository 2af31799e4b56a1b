"""Every admin page a staff user limited to one tenant can open, with the admin's tenant filters
stripped and the request run as the application role (``rls_support.database_alone``): PostgreSQL's
row-level security alone keeps the other tenant's rows out (issue 26). Both tenants hold a
conversation with the same public id, the same turns, paths, compaction and reported renders; each
side's title and one turn carry a marker naming it."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime

import pytest
from django.db import connection
from django.urls import reverse

from tests import rls_support
from tests.admin import urls
from tests.admin.builders import compacted_conversation, reported_usage
from tests.factories import add_turn
from timeline_app.domain import blocks as b
from timeline_app.models import Block, Compaction, Conversation, RenderRecord, RenderUsage, Tenant

pytestmark = pytest.mark.django_db
START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
MINE, THEIRS = "ACMEPLANTMARK", "GLOBEXPLANTMARK"
PATH = b.tool_result_path("turn_mark", "tc_markx0")


@pytest.fixture(autouse=True)
def _postgres_only():
    if connection.vendor != "postgresql":
        pytest.skip("row-level security is PostgreSQL's")


def _plant(name: str, marker: str) -> Conversation:
    tenant = Tenant.objects.create(name=name)
    conversation, timeline = compacted_conversation(tenant, public_id="shared", title=f"Trip {marker}")
    reported_usage(timeline, start=START)
    add_turn(
        timeline,
        99,
        turn_id="turn_mark",
        prompt=f"Find a hotel ribeira {marker}",
        tool_calls=1,
        result=f"Hotel ribeira {marker}",
        answer=f"Booked {marker}",
    )
    return conversation


@pytest.fixture
def planted(_app_role, roles_ready):
    return _plant("acme", MINE), _plant("globex", THEIRS)


@pytest.fixture
def limited(support_user, operator_user, planted):
    acme = Tenant.objects.get(name="acme")
    acme.staff_users.add(support_user, operator_user)
    return planted


def _open(client, url: str) -> tuple[int, str, object, list[str]]:
    with rls_support.database_alone() as dropped:
        response = client.get(url)
        body = b"".join(response.streaming_content) if response.streaming else response.content
    return response.status_code, body.decode(), response.context, list(dropped)


def _listed_tenants(context) -> set[str]:
    rows = context["cl"].result_list
    ids = {row.pk if isinstance(row, Tenant) else row.tenant_id for row in rows}
    return set(Tenant.objects.filter(pk__in=ids).values_list("name", flat=True))


CHANGELISTS = [
    ("conversation", ""),
    ("conversation", "?q=ribeira"),
    ("conversation", "?q=shared"),
    ("conversation", "?o=8"),  # by cost
    ("block", ""),
    ("block", f"?q={PATH}"),
    ("block", "?turn_id=turn_mark"),
    ("compaction", ""),
    ("tenant", ""),
]


@pytest.mark.parametrize(("model", "query"), CHANGELISTS)
def test_every_list_shows_only_the_staff_users_tenant(support, limited, model, query):
    status, html, context, dropped = _open(support, urls.changelist(model) + query)
    assert status == 200
    assert THEIRS not in html
    assert _listed_tenants(context) == {"acme"}
    assert dropped or model == "tenant", "the admin's tenant filters were stripped"


def test_a_search_for_the_other_tenants_marker_finds_nothing(support, limited):
    status, _html, context, _ = _open(support, urls.changelist("conversation") + f"?q={THEIRS.lower()}")
    assert status == 200 and list(context["cl"].result_list) == []


def test_the_conversation_page_its_cost_and_its_renders_are_the_tenants_own(support, limited):
    mine, _theirs = limited
    cost = sum(RenderUsage.objects.filter(conversation=mine).values_list("cost_usd", flat=True))
    for url in (urls.conversation(mine.pk), urls.change("conversation", "shared")):
        status, html, _, dropped = _open(support, url)
        assert status == 200 and dropped
        assert MINE in html and THEIRS not in html
        # The cost panel sums this conversation's three reports, not both tenants' six.
        assert f"${format(cost.normalize(), 'f')}" in html
    status, html, _, _ = _open(support, urls.render_preview(mine.pk))
    assert status == 200 and MINE in html and THEIRS not in html


def test_past_renders_open_for_the_tenants_own_only(support, limited):
    mine, theirs = limited
    own = RenderRecord.objects.filter(conversation=mine).first()
    foreign = RenderRecord.objects.filter(conversation=theirs).first()

    def past(conversation: Conversation, record: RenderRecord) -> str:
        return reverse("admin:timeline_app_conversation_past_render", args=[conversation.pk, record.pk])

    status, html, _, _ = _open(support, past(mine, own))
    assert status == 200 and THEIRS not in html
    assert _open(support, past(mine, foreign))[0] == 404
    status, html, _, _ = _open(support, past(theirs, foreign))
    assert status in (302, 404) and THEIRS not in html


def test_the_other_tenants_objects_are_out_of_reach(support, limited):
    _mine, theirs = limited
    pages = {
        "conversation": urls.conversation(theirs.pk),
        "render preview": urls.render_preview(theirs.pk),
        "block": urls.change("block", Block.objects.get(conversation=theirs, path=PATH).pk),
        "compaction": urls.change("compaction", Compaction.objects.filter(conversation=theirs).first().pk),
        "tenant": urls.change("tenant", theirs.tenant_id),
    }
    for page, url in pages.items():
        status, html, _, _ = _open(support, url)
        assert status in (302, 404), page
        assert THEIRS not in html, page


def test_the_tenants_own_change_pages_open(support, limited):
    mine, _ = limited
    for url in (
        urls.change("block", Block.objects.get(conversation=mine, path=PATH).pk),
        urls.change("compaction", Compaction.objects.filter(conversation=mine).first().pk),
        urls.change("tenant", mine.tenant_id),
    ):
        status, html, _, _ = _open(support, url)
        assert status == 200, url
        assert THEIRS not in html and "globex" not in html, url


def test_the_operators_usage_csv_and_export_hold_the_tenants_rows_only(operator, limited):
    mine, _ = limited
    csv_url = reverse("admin:timeline_app_conversation_usage_csv")
    status, body, _, _ = _open(operator, csv_url + "?tenant=acme")
    assert status == 200
    assert len(list(csv.reader(io.StringIO(body)))) - 1 == 3  # acme's three reports, not six
    # Another tenant is unknown to this operator: not an empty CSV under its name.
    assert _open(operator, csv_url + "?tenant=globex")[0] == 400
    status, body, _, _ = _open(operator, urls.export(mine.pk))
    assert status == 200 and MINE in body and THEIRS not in body
