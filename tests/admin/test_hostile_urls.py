"""Issue 30, defect 2: every admin URL pattern, resolved from the URLconf, with a hostile value in
each of its parameters (path and query) answers without a 500: NUL, a lone surrogate (as the
UTF-8 bytes a client can send), an impossible date and 2^63. A staff user may send any of them
(the usage CSV with ``since=2026-13-01`` or a NUL in ``tenant``, a NUL in a conversation's id on
its page and its past-render page were 500s).

The other parameters hold valid values (an existing object of the pattern's model, an existing
render record, the app label), so each hostile value reaches the code that reads it. The query
parameters tried are those the admin's own pages link to (read from each list page) plus those
the custom pages read and Django's own."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from unittest import mock
from urllib.parse import parse_qsl, urlencode

import pytest
from django.apps import apps
from django.contrib.contenttypes.models import ContentType
from django.http import QueryDict
from django.urls import URLPattern, URLResolver, get_resolver
from django.utils import timezone

from tests.admin.builders import compacted_conversation
from timeline_app.models import Conversation, RenderRecord, RenderUsage, Tenant
from timeline_app.rendering.pipeline import RenderOptions
from timeline_app.rendering.request_head import RequestHead
from timeline_app.services.render import timeline_render
from timeline_app.services.usage import render_usage_report

pytestmark = pytest.mark.django_db

HOSTILE = {
    "nul": "a%00b",
    "lone_surrogate": "%ED%A0%80",  # U+D800 as UTF-8 bytes
    "impossible_month": "2026-13-01",
    "zero_date": "0000-00-00",
    "impossible_day": "2026-02-30",
    "two_to_the_63": str(2**63),
}
# Valid values of the query parameters a page needs to read the others (the usage CSV reads
# since and until once tenant names one).
VALID_QUERY = {"tenant": "acme", "context": "main"}
PARAM = re.compile(r"<(?:(?P<converter>\w+):)?(?P<name>\w+)>|\(\?P<(?P<group>\w+)>[^)]*\)")


@dataclass(frozen=True)
class Route:
    prefix: str  # the route of the resolvers around it ("admin/timeline_app/conversation/")
    route: str  # its own route or regex
    name: str

    @property
    def model_prefix(self) -> tuple[str, str] | None:
        parts = self.prefix.strip("/").split("/")
        return (parts[1], parts[2]) if len(parts) == 3 else None

    def parameters(self) -> list[str]:
        return [m.group("name") or m.group("group") for m in PARAM.finditer(self.route)]

    def url(self, values: dict[str, str]) -> str:
        def value(match: re.Match[str]) -> str:
            return values[match.group("name") or match.group("group")]

        route = self.route.removeprefix("^").removesuffix("$").removesuffix("\\Z")
        return "/" + self.prefix + PARAM.sub(value, route)


def admin_routes() -> list[Route]:
    def walk(patterns: list, prefix: str) -> Iterator[Route]:
        for pattern in patterns:
            text = str(pattern.pattern)
            if isinstance(pattern, URLResolver):
                yield from walk(pattern.url_patterns, prefix + text.removeprefix("^"))
            elif isinstance(pattern, URLPattern) and prefix.startswith("admin/"):
                yield Route(prefix=prefix, route=text, name=pattern.name or "")

    return list(walk(get_resolver().url_patterns, ""))


@pytest.fixture
def planted(superuser):
    """One conversation with a compaction, a recorded render and its usage report; every other
    model of the admin gets its rows through it."""
    tenant = Tenant.objects.create(name="acme")
    conversation, timeline = compacted_conversation(tenant)
    timeline.refresh_from_db()
    outcome = timeline_render(
        timeline=timeline,
        options=RenderOptions(format="anthropic"),
        now=timezone.now() - timedelta(minutes=1),
        head=RequestHead(system_tokens=10),
    )
    record = RenderRecord.objects.get(timeline=timeline, public_id=outcome.render_id)
    render_usage_report(
        timeline=timeline,
        render_id=outcome.render_id,
        body={"usage": {"input_tokens": 10, "output_tokens": 1}, "model": "claude-sonnet-4-5"},
        now=timezone.now(),
    )
    assert RenderUsage.objects.exists()
    return conversation, record


def valid_values(route: Route, conversation: Conversation, record: RenderRecord) -> dict[str, str]:
    values = {"app_label": "timeline_app", "record_id": str(record.pk), "url": "timeline_app/"}
    model_ref = route.model_prefix
    if model_ref is not None:
        model = apps.get_model(*model_ref)
        first = model._default_manager.order_by("pk").first()
        values["object_id"] = values["id"] = str(first.pk) if first is not None else "1"
    else:
        values["object_id"] = str(conversation.pk)
        values["content_type_id"] = str(ContentType.objects.get_for_model(Conversation).pk)
    return values


def read_query_names(client, url: str) -> set[str]:
    """The query parameters a page reads while it answers ``url`` (``request.GET`` lookups), and
    on a list page those it links to (its filters, sorting, search)."""
    read: set[str] = set()
    originals = {name: getattr(QueryDict, name) for name in ("__getitem__", "get", "getlist", "__contains__")}

    def recording(name):
        def method(self, key, *args, **kwargs):
            read.add(key)
            return originals[name](self, key, *args, **kwargs)

        return method

    with mock.patch.multiple(QueryDict, **{name: recording(name) for name in originals}):
        page = client.get(url)
    if page.status_code == 200 and "html" in page.get("Content-Type", ""):
        hrefs = re.findall(r'href="[^"?]*\?([^"]*)"', page.content.decode())
        read |= {name for query in hrefs for name, _ in parse_qsl(query.replace("&amp;", "&"))}
    return read


def test_no_admin_url_answers_500_to_hostile_parameters(admin_client_, planted):
    conversation, record = planted
    admin_client_.raise_request_exception = False  # a 500 is an answer to count, not a crash
    routes = admin_routes()
    names = {route.name for route in routes}
    # The walk found the pages the issue names, and every model admin's.
    assert {
        "timeline_app_conversation_usage_csv",
        "timeline_app_conversation_change",
        "timeline_app_conversation_past_render",
        "timeline_app_conversation_render",
        "timeline_app_block_changelist",
    } <= names
    failures: list[str] = []
    tried: dict[str, set[str]] = {}
    for route in routes:
        values = valid_values(route, conversation, record)
        base_params = {name: values[name] for name in route.parameters()}
        base = f"{route.url(base_params)}?{urlencode(VALID_QUERY)}"
        query_names = read_query_names(admin_client_, base)
        tried[route.name or route.route] = query_names | set(base_params)
        cases = [
            (f"{route.url({**base_params, name: hostile})}?{urlencode(VALID_QUERY)}", f"{name}={label}")
            for name in base_params
            for label, hostile in HOSTILE.items()
        ]
        cases += [
            (f"{base}&{urlencode({name: 'x'})[:-1]}{hostile}", f"?{name}={label}")
            for name in sorted(query_names)
            for label, hostile in HOSTILE.items()
        ]
        for url, what in cases:
            response = admin_client_.get(url)
            if response.status_code >= 500:
                failures.append(f"{route.name or route.route} {what}: {response.status_code} ({url})")
    # The walk reached what the issue names: the CSV's dates and tenant, the pages' object ids.
    assert {"tenant", "since", "until"} <= tried["timeline_app_conversation_usage_csv"]
    assert {"object_id", "record_id", "context"} <= tried["timeline_app_conversation_past_render"]
    assert {"object_id", "context", "page"} <= tried["timeline_app_conversation_change"]
    assert failures == [], "\n".join(failures)


# ---------------------------------------------------------------- the cases the issue names


@pytest.mark.parametrize(
    "query",
    [
        "tenant=acme&since=2026-13-01",
        "tenant=acme&until=0000-00-00",
        "tenant=acme&since=2026-02-30",
        "tenant=%00",
        "tenant=ac%00me",
    ],
)
def test_the_usage_csv_answers_400_to_an_impossible_date_or_a_nul_in_tenant(admin_client_, planted, query):
    response = admin_client_.get(f"/admin/timeline_app/conversation/usage.csv?{query}")
    assert response.status_code == 400


@pytest.mark.parametrize("page", ["change/", "render/", "history/", "export/", "renders/{record}/"])
@pytest.mark.parametrize("object_id", ["%00", "conv%00"])
def test_a_nul_in_a_conversation_id_is_a_400_on_its_pages(admin_client_, planted, page, object_id):
    _conversation, record = planted
    url = f"/admin/timeline_app/conversation/{object_id}/{page.format(record=record.pk)}"
    assert admin_client_.get(url).status_code == 400
