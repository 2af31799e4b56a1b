"""PostgreSQL refuses another tenant's rows whatever the code asks (issue 26), checked as the
application's role (a superuser would skip every policy): nothing set, nothing seen; tenant A set,
A's rows only; a row for B written while A is set, refused."""

from __future__ import annotations

import pytest
from django.apps import apps
from django.db import ProgrammingError, connection, transaction
from django.utils import timezone

from tests import rls_support
from timeline_app import tenancy
from timeline_app.models import (
    ApiKey,
    Block,
    Compaction,
    Conversation,
    Operation,
    RenderRecord,
    RenderUsage,
    Source,
    Timeline,
)

pytestmark = pytest.mark.django_db


def tenant_models():
    """Every model with a ``tenant`` column: each must be under the policy."""
    return [
        model
        for model in apps.get_app_config("timeline_app").get_models()
        if any(field.name == "tenant" for field in model._meta.concrete_fields)
    ]


@pytest.fixture
def planted(two_tenants):
    """Rows of every tenant-owned table for two tenants (acme: mine and same_tenant; globex)."""
    for side in (two_tenants.mine, two_tenants.other_tenant):
        rendered = side.caller.post(f"{side.url}render/", {"format": "anthropic"})
        reported = side.caller.post(
            f"{side.url}renders/{rendered.json()['render_id']}/usage/",
            {"usage": {"input_tokens": 1_000, "output_tokens": 50}, "model": "claude-sonnet-4-5"},
        )
        assert reported.status_code == 201, reported.content
        timeline = Timeline.objects.get(conversation=side.conversation, name="main")
        Compaction.objects.create(
            timeline=timeline, trigger="manual", status="failed", started_at=timezone.now()
        )
    acme, globex = two_tenants.mine.caller.tenant, two_tenants.other_tenant.caller.tenant
    counts = {
        model: (model.objects.filter(tenant=acme).count(), model.objects.filter(tenant=globex).count())
        for model in tenant_models()
    }
    assert all(mine and theirs for mine, theirs in counts.values()), counts
    return acme, globex, counts


def test_every_tenant_table_is_under_the_forced_policy():
    """A model given a tenant column without ``tenancy.RowLevelSecurity`` in its migration fails
    here (the list comes from the models, not from the migration)."""
    if connection.vendor != "postgresql":
        pytest.skip("row-level security is PostgreSQL's")
    tables = {model._meta.db_table for model in tenant_models()}
    assert {
        "timeline_app_apikey",
        "timeline_app_conversation",
        "timeline_app_timeline",
        "timeline_app_block",
        "timeline_app_compaction",
        "timeline_app_renderrecord",
        "timeline_app_source",
        "timeline_app_renderusage",
        "timeline_app_operation",
    } <= tables
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname, c.relrowsecurity, c.relforcerowsecurity,"
            " EXISTS (SELECT FROM pg_policies p WHERE p.tablename = c.relname AND p.policyname = %s)"
            " FROM pg_class c WHERE c.relname = ANY(%s)",
            [tenancy.POLICY_NAME, sorted(tables)],
        )
        rows = {name: (enabled, forced, policy) for name, enabled, forced, policy in cursor.fetchall()}
    assert rows == {table: (True, True, True) for table in tables}


def test_every_row_below_a_conversation_carries_its_tenant_and_conversation(planted):
    for model in (Timeline, Block, Compaction, RenderRecord, Source, RenderUsage, Operation):
        for row in model.objects.select_related(
            "timeline__conversation" if model is not Timeline else "conversation"
        ):
            conversation = row.conversation if model is Timeline else row.timeline.conversation
            assert row.tenant_id == conversation.tenant_id
            if model is not Timeline:
                assert row.conversation_id == conversation.pk


def test_nothing_set_sees_no_row_of_any_tenant_table(planted, app_role):
    tenancy.scope_clear()
    for model in tenant_models():
        assert model.objects.count() == 0, model


def test_tenant_a_set_sees_only_tenant_a_rows(planted, app_role):
    acme, globex, counts = planted
    tenancy.tenant_set(acme.pk)
    for model in tenant_models():
        # No tenant filter in the query: the policy alone.
        assert sorted(set(model.objects.values_list("tenant_id", flat=True))) == [acme.pk], model
        assert model.objects.count() == counts[model][0], model
    tenancy.tenant_set(globex.pk)
    for model in tenant_models():
        assert model.objects.count() == counts[model][1], model


def test_a_row_for_b_is_refused_while_a_is_set(planted, app_role):
    acme, globex, _ = planted
    tenancy.tenant_set(acme.pk)
    mine = Timeline.objects.get(conversation__public_id="c1", name="main")
    with pytest.raises(ProgrammingError, match="row-level security"), transaction.atomic():
        Conversation.objects.create(
            tenant=globex, public_id="planted", started_at=timezone.now(), last_activity_at=timezone.now()
        )
    with pytest.raises(ProgrammingError, match="row-level security"), transaction.atomic():
        Block.objects.bulk_create(
            [
                Block(
                    timeline=mine,
                    tenant_id=globex.pk,
                    conversation_id=mine.conversation_id,
                    seq=999,
                    type="react.notes",
                )
            ]
        )
    # Moving one of A's rows to B is refused too (WITH CHECK on UPDATE).
    with pytest.raises(ProgrammingError, match="row-level security"), transaction.atomic():
        Source.objects.filter(timeline=mine).update(tenant_id=globex.pk)
    # B's rows cannot be changed or deleted: they are not there.
    assert Conversation.objects.filter(tenant=globex).update(title="x") == 0
    assert Block.objects.filter(tenant_id=globex.pk).delete()[0] == 0


def test_the_widened_scope_sees_every_tenant(planted, app_role):
    _, _, counts = planted
    with tenancy.tenant_scope_all():
        for model in tenant_models():
            assert model.objects.count() >= sum(counts[model]), model
    assert rls_support.current_settings() == ("", "", "")
    assert Conversation.objects.count() == 0


def test_the_key_lookup_sees_the_presented_key_only(planted, app_role):
    tenancy.api_key_lookup_scope(ApiKey.hash_key("tlk_not_a_key"))
    assert ApiKey.objects.count() == 0
    with tenancy.tenant_scope_all():
        some_hash = ApiKey.objects.values_list("key_hash", flat=True).first()
    tenancy.api_key_lookup_scope(some_hash)
    assert list(ApiKey.objects.values_list("key_hash", flat=True)) == [some_hash]
    # ... and no tenant's rows.
    assert Conversation.objects.count() == 0
