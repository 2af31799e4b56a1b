"""Reads of API keys, conversations and their contexts' rows, scoped to a tenant."""

from __future__ import annotations

from django.db import connection
from django.db.models import QuerySet
from django.db.models.expressions import RawSQL

from timeline_app import tenancy
from timeline_app.domain import blocks as b
from timeline_app.errors import NotFound
from timeline_app.models import ApiKey, Block, Conversation, Tenant, Timeline


def api_key_lookup(*, raw_key: str, claim_tenant: bool = False) -> ApiKey | None:
    """The live key with this raw value. ``claim_tenant`` (PostgreSQL, under
    ``tenancy.api_key_lookup_scope``): the same statement sets the session to the key's tenant
    (``tenancy.key_row_claims_tenant_sql``); the caller checks the key came back."""
    rows = ApiKey.objects.select_related("tenant").filter(
        key_hash=ApiKey.hash_key(raw_key), revoked_at__isnull=True
    )
    if claim_tenant and connection.vendor == "postgresql":
        column = f'"{ApiKey._meta.db_table}"."tenant_id"'
        rows = rows.annotate(tenant_claimed=RawSQL(tenancy.key_row_claims_tenant_sql(column), ()))
        tenancy.note_tenant_set()
    return rows.first()


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
    return (
        Timeline.objects.select_related("conversation")
        .filter(conversation__tenant=tenant, conversation__public_id=public_id, name=name)
        .first()
    )


def timeline_require(*, conversation: Conversation, name: str) -> Timeline:
    timeline = timeline_get(conversation=conversation, name=name)
    if timeline is None:
        raise NotFound(f"context {name!r} not found", details={"context": name})
    return timeline
