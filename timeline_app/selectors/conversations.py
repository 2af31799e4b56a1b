"""Reads of API keys, conversations and their contexts' rows, scoped to a tenant."""

from __future__ import annotations

from functools import cache

from django.db import connection
from django.db.models import QuerySet

from timeline_app import tenancy
from timeline_app.domain import blocks as b
from timeline_app.errors import NotFound
from timeline_app.models import ApiKey, Block, Conversation, Tenant, Timeline
from timeline_app.selectors.rows import Columns, one_with_related

_KEY, _TENANT = Columns(ApiKey), Columns(Tenant)
_TIMELINE, _CONVERSATION = Columns(Timeline), Columns(Conversation)


@cache
def _api_key_sql(claim_tenant: bool) -> str:
    """The key with its tenant (the ORM's ``select_related("tenant")`` statement, written once);
    ``claim_tenant``: with ``tenancy.key_row_claims_tenant_sql`` after the tenant's columns."""
    key, tenant = _KEY.table, _TENANT.table
    tenant_column = f'"{key}"."tenant_id"'
    claim = f", ({tenancy.key_row_claims_tenant_sql(tenant_column)})" if claim_tenant else ""
    return (
        f"SELECT {_KEY.select()}, {_TENANT.select()}{claim} "
        f'FROM "{key}" INNER JOIN "{tenant}" ON ("{key}"."tenant_id" = "{tenant}"."id") '
        f'WHERE ("{key}"."key_hash" = %s AND "{key}"."revoked_at" IS NULL) '
        f'ORDER BY "{key}"."id" ASC LIMIT 1'
    )


def api_key_lookup(*, raw_key: str, claim_tenant: bool = False) -> ApiKey | None:
    """The live key with this raw value, its tenant read with it. ``claim_tenant`` (PostgreSQL,
    under ``tenancy.api_key_lookup_scope``): the same statement sets the session to the key's
    tenant (``tenancy.key_row_claims_tenant_sql``); the caller checks the key came back."""
    claim = claim_tenant and connection.vendor == "postgresql"
    if claim:
        tenancy.note_tenant_set()
    found = one_with_related(_api_key_sql(claim), [ApiKey.hash_key(raw_key)], _KEY, _TENANT)
    if found is None:
        return None
    key = found[0]
    key.tenant = found[1]
    return key


def timeline_tenant_id(*, timeline_id: int) -> int | None:
    """The tenant a timeline belongs to (``None`` once erased): what a task runs as."""
    return Timeline.objects.filter(pk=timeline_id).values_list("tenant_id", flat=True).first()


def conversation_list(*, tenant: Tenant) -> QuerySet[Conversation]:
    return Conversation.objects.filter(tenant=tenant).order_by("-id")


def conversation_get(*, tenant: Tenant, public_id: str) -> Conversation:
    conversation = Conversation.objects.filter(tenant=tenant, public_id=public_id).first()
    if conversation is None:
        raise NotFound(f"conversation {public_id!r} not found", details={"conversation": public_id})
    return conversation


def timeline_get(*, conversation: Conversation, name: str) -> Timeline | None:
    timeline = Timeline.objects.filter(conversation=conversation, name=name).first()
    if timeline is not None:
        timeline.conversation = conversation  # callers read its settings: no second query
    return timeline


def timeline_names(*, conversation: Conversation) -> list[str]:
    return list(
        Timeline.objects.filter(conversation=conversation).order_by("id").values_list("name", flat=True)
    )


def timeline_current_turn_id(*, timeline: Timeline) -> str:
    """The turn of the latest turn header: blocks contributed without ``turn_id`` join it."""
    turn = (
        Block.objects.filter(timeline=timeline, type=b.TURN_HEADER)
        .order_by("-seq")
        .values_list("turn_id", flat=True)
        .first()
    )
    return turn or ""


def timeline_of(*, tenant: Tenant, public_id: str, name: str) -> Timeline | None:
    """The context ``name`` of the tenant's conversation ``public_id`` with its conversation, in
    one query (``None`` when either is missing): what every request on a context reads first."""
    found = one_with_related(_timeline_of_sql(), [public_id, tenant.pk, name], _TIMELINE, _CONVERSATION)
    if found is None:
        return None
    timeline = found[0]
    timeline.conversation = found[1]
    return timeline


@cache
def _timeline_of_sql() -> str:
    """The ORM's ``select_related("conversation")`` statement for ``timeline_of``, written once."""
    timeline, conversation = _TIMELINE.table, _CONVERSATION.table
    return (
        f"SELECT {_TIMELINE.select()}, {_CONVERSATION.select()} "
        f'FROM "{timeline}" INNER JOIN "{conversation}" '
        f'ON ("{timeline}"."conversation_id" = "{conversation}"."id") '
        f'WHERE ("{conversation}"."public_id" = %s AND "{conversation}"."tenant_id" = %s '
        f'AND "{timeline}"."name" = %s) ORDER BY "{timeline}"."id" ASC LIMIT 1'
    )


def timeline_require(*, conversation: Conversation, name: str) -> Timeline:
    timeline = timeline_get(conversation=conversation, name=name)
    if timeline is None:
        raise NotFound(f"context {name!r} not found", details={"context": name})
    return timeline
