from __future__ import annotations

import json
import os
from collections.abc import Callable

import httpx
import pytest
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from django.http import HttpResponse
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings
from rest_framework.test import APIClient
from timeline_client import TimelineClient

from timeline_app.models import Conversation, Tenant, Timeline
from timeline_app.services.api_keys import api_key_create
from timeline_app.services.conversations import conversation_create

# `make test-fast` (HYPOTHESIS_PROFILE=dev): fewer examples; tests/budget.py scales the explicit counts.
# The inner loop runs on shared, loaded machines, where data generation alone can pass Hypothesis'
# too-slow threshold (tests/domain/test_meta_caps.py failed it in 2 of 3 runs at load 12): that
# says how busy the machine is, not that a test is wrong. `make test` keeps the health check.
hypothesis_settings.register_profile("dev", max_examples=10, suppress_health_check=[HealthCheck.too_slow])
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

if "MUTANT_UNDER_TEST" in os.environ:  # under mutmut: a cloned test database per forked session
    from tests.mutation_db import django_db_setup  # noqa: F401


@pytest.fixture(scope="session", autouse=True)
def _database_is_the_real_one(django_db_setup, django_db_blocker):
    """Under `make test` the suite must run on PostgreSQL; print its version once."""
    if os.environ.get("TIMELINE_REQUIRE_POSTGRES") != "1":
        return
    from django.db import connection

    with django_db_blocker.unblock():
        assert connection.vendor == "postgresql", "make test must run on PostgreSQL"
        with connection.cursor() as cursor:
            cursor.execute("select version()")
            print(f"\nDatabase: {cursor.fetchone()[0]}")


@pytest.fixture
def _app_role(db):
    """The plain application role the row-level security tests run as (tests/rls_support.py),
    created inside the test's transaction (so it goes with it)."""
    from django.db import connection

    from tests import rls_support

    if connection.vendor != "postgresql":
        pytest.skip("row-level security is PostgreSQL's")
    rls_support.create_app_role()
    return rls_support.APP_ROLE


@pytest.fixture
def app_role(_app_role):
    """Queries run as the application role inside the test (``SET ROLE``), not the superuser;
    ask for it after the fixtures that plant rows."""
    from tests import rls_support

    with rls_support.app_role():
        yield _app_role


RLS_ONLY = os.environ.get("TIMELINE_TEST_RLS_ONLY") == "1"


@pytest.fixture(autouse=True)
def _database_alone_holds_the_line(request):
    """``TIMELINE_TEST_RLS_ONLY=1``: every request runs as the application role with every tenant
    filter dropped (tests/rls_support.py), so a cross-tenant test passes only if PostgreSQL's
    row-level security refuses the other tenant's rows itself."""
    if not RLS_ONLY or not _needs_db(request.node):
        yield
        return
    from django.core import signals

    from tests import rls_support

    request.getfixturevalue("_app_role")
    with rls_support.strip_tenant_filters():
        signals.request_started.connect(rls_support.request_started, dispatch_uid="rls-only-start")
        signals.request_finished.connect(rls_support.request_finished, dispatch_uid="rls-only-finish")
        try:
            yield
        finally:
            signals.request_started.disconnect(dispatch_uid="rls-only-start")
            signals.request_finished.disconnect(dispatch_uid="rls-only-finish")


DB_FIXTURES = frozenset({"db", "transactional_db", "django_db_reset_sequences", "live_server"})


def _needs_db(item) -> bool:
    """A test that can reach the database: marked ``django_db`` or using a fixture that needs it
    (``fixturenames`` includes what the test's fixtures depend on)."""
    return item.get_closest_marker("django_db") is not None or bool(
        DB_FIXTURES & set(getattr(item, "fixturenames", ()))
    )


@pytest.fixture(autouse=True)
def _fresh_cache(request):
    """Throttle counters live in the shared cache (the database cache unless CACHE_URL is set),
    and in this process's fallback while that cache is down: every test that can reach the
    database starts with none of either."""
    if _needs_db(request.node):
        request.getfixturevalue("_django_db_helper")
        from django.core.cache import cache

        from timeline_app.api.throttling import FALLBACK_CACHE

        cache.clear()
        FALLBACK_CACHE.clear()
    yield


class Caller:
    """An API client holding one tenant's key."""

    def __init__(self, tenant: Tenant, raw_key: str | None):
        self.tenant = tenant
        self.raw_key = raw_key
        self.client = APIClient()
        if raw_key:
            self.client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw_key}")

    def get(self, url: str, **params):
        response = self.client.get(url, params)
        if response.streaming:  # the export: read whole, as an HTTP client does
            body = b"".join(response.streaming_content)
            whole = HttpResponse(body, status=response.status_code, content_type=response["Content-Type"])
            whole.json = lambda: json.loads(body)  # type: ignore[attr-defined]
            whole.streamed = True  # type: ignore[attr-defined]
            return whole
        return response

    def post(self, url: str, data=None):
        return self.client.post(url, data if data is not None else {}, format="json")

    def post_raw(self, url: str, body: bytes | str, content_type: str = "application/json"):
        return self.client.generic("POST", url, body, content_type=content_type)

    def delete(self, url: str):
        return self.client.delete(url)


@pytest.fixture
def make_caller(db) -> Callable[[str], Caller]:
    def make(tenant_name: str) -> Caller:
        key, raw = api_key_create(tenant_name=tenant_name)
        return Caller(key.tenant, raw)

    return make


@pytest.fixture
def owner(make_caller) -> Caller:
    return make_caller("acme")


@pytest.fixture
def outsider(make_caller) -> Caller:
    return make_caller("globex")


@pytest.fixture
def anonymous(db) -> Caller:
    return Caller(Tenant(name="nobody"), None)


@pytest.fixture
def conversation(owner: Caller) -> Conversation:
    return conversation_create(tenant=owner.tenant, public_id="c1", title="First")


@pytest.fixture
def timeline(conversation: Conversation) -> Timeline:
    return Timeline.objects.get(conversation=conversation, name="main")


@pytest.fixture
def two_tenants(make_caller):
    """acme/c1, acme/c2 and globex/c1 planted alike (see tests/fixtures/two_tenants.py)."""
    from tests.fixtures.two_tenants import two_tenants as plant_two_tenants

    return plant_two_tenants(make_caller)


def pytest_collection_modifyitems(config, items):
    """Under mutmut, tests that need no database run first: with ``-x`` a mutant a pure test
    catches is killed in milliseconds instead of after every API test that reaches it."""
    if "MUTANT_UNDER_TEST" not in os.environ:
        return
    items.sort(key=_needs_db)


@pytest.fixture
def in_process_requests():
    """Like Django's test client: the request cycle must not close the test's connection."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield get_wsgi_application()
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


@pytest.fixture
def wsgi_http(in_process_requests):
    """An httpx client that calls the Django app in-process (same test database, no server)."""
    with httpx.Client(
        transport=httpx.WSGITransport(app=in_process_requests), base_url="http://testserver"
    ) as client:
        yield client


@pytest.fixture
def api(owner, wsgi_http) -> TimelineClient:
    return TimelineClient("http://testserver", owner.raw_key, http_client=wsgi_http)


@pytest.fixture(autouse=True)
def _no_actor_left_behind():
    from timeline_app.services.operations import current_actor

    yield
    assert current_actor() == "system", "a request left its operations-log actor behind"
