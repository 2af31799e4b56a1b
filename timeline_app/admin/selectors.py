"""The reads of the support admin but its conversation page's (``admin.page_selectors``): the
conversation lookup, list annotations, the operator actions' targets and the planner's row estimate.

Every number on the conversation list comes from a correlated subquery in the one list query (no
per-row Python query), and each subquery reads through an index of the block table:

* turns — the ``turn.header`` blocks, through ``timeline_block_type_seq_idx``;
* blocks — the stored blocks of every context (``models.block_count_of``, the one block count),
  through the ``(timeline, seq)`` index;
* visible tokens (main context) — ``TimelineQuerySet.with_window``'s ``visible_tokens``, the
  window the API and the sweep read;
* compactions / last status — the compaction rows of the conversation's contexts;
* cost / cache-read share — the conversation's reported usage rows, through
  ``timeline_usage_conv_at_idx``.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, TypedDict

from django.db import connections
from django.db.models import (
    BigIntegerField,
    Case,
    Count,
    DecimalField,
    Exists,
    F,
    FloatField,
    IntegerField,
    OuterRef,
    QuerySet,
    Subquery,
    Sum,
    When,
)
from django.db.models.functions import Coalesce, Length

from timeline_app import tenancy
from timeline_app.domain import blocks as b
from timeline_app.domain.identifiers import COMPACTION_ID_PATTERN, RENDER_ID_PATTERN
from timeline_app.domain.message_validation import storable_problems
from timeline_app.errors import InvalidInput
from timeline_app.models import (
    Block,
    Compaction,
    Conversation,
    RenderRecord,
    RenderUsage,
    Tenant,
    Timeline,
    block_count_of,
)
from timeline_app.selectors.blocks import blocks_matching

if TYPE_CHECKING:
    pass

# PostgreSQL's bigint: a longer number in a URL is no database id (and would fail the query).
_MAX_PK = 2**63 - 1


def _count(queryset: QuerySet[Any], group_by: str) -> Subquery:
    """``COUNT(*)`` of a correlated queryset as a scalar subquery."""
    return Subquery(
        queryset.order_by().values(group_by).annotate(n=Count("pk")).values("n")[:1],
        output_field=IntegerField(),
    )


# ---------------------------------------------------------------- tenant scope and search


def staff_tenant_ids(*, user: Any) -> list[int] | None:
    """The tenants a staff user may see in the admin: ``None`` for all of them (superusers, and
    staff users listed on no tenant), else the ids of the tenants listing the user; the same
    answer the row-level security scope of the request was set from (``tenancy``)."""
    return tenancy.staff_tenant_ids(user=user)


def in_tenants(queryset: QuerySet[Any], tenant_ids: list[int] | None, *, via: str) -> QuerySet[Any]:
    """``queryset`` limited to ``tenant_ids`` (``via``: the lookup from the model to the tenant id)."""
    return queryset if tenant_ids is None else queryset.filter(**{f"{via}__in": tenant_ids})


def tenant_choices(*, tenant_ids: list[int] | None) -> list[tuple[int, str]]:
    """(id, name) of the tenants a list filter offers, by name."""
    return list(in_tenants(Tenant.objects.order_by("name"), tenant_ids, via="pk").values_list("pk", "name"))


def conversations_by_record_id(*, term: str) -> QuerySet[Any] | None:
    """The conversation of a compaction (``cmp_…``) or a render (``rnd_…``) id, as a subquery for
    the conversation list (the caller's queryset keeps it to the staff user's tenants); ``None``
    when ``term`` is neither."""
    if COMPACTION_ID_PATTERN.match(term):
        return Compaction.objects.filter(public_id=term).order_by().values("conversation_id")
    if RENDER_ID_PATTERN.match(term):
        return RenderRecord.objects.filter(public_id=term).order_by().values("conversation_id")
    return None


def conversations_with_text(*, query: str) -> QuerySet[Any] | None:
    """The ids of the conversations with a block (of any context, hidden and compacted ones too)
    whose text matches ``query`` in the search index, as a subquery for the conversation list; the
    caller's queryset keeps it to the staff user's tenants. ``None`` when the query has no word
    the index can look up (only punctuation or negated words)."""
    try:
        blocks = blocks_matching(Block.objects.all(), query=query)
    except InvalidInput:
        return None
    return blocks.order_by().values("timeline__conversation_id")


class ConversationListAnnotations(TypedDict):
    """What ``conversation_admin_list()`` adds to each conversation row (the list's columns)."""

    turn_count: int
    block_count: int
    visible_tokens: int
    compaction_count: int
    last_compaction_status: str | None


if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations

    ListedConversation = WithAnnotations[Conversation, ConversationListAnnotations]
    """A conversation row read through ``conversation_admin_list()``."""


def conversation_admin_list() -> QuerySet[Conversation]:
    """The admin list: one query for a page of conversations with every column annotated."""
    of_conversation = {"timeline__conversation": OuterRef("pk")}
    main: QuerySet[Any] = Timeline.objects.with_window().filter(
        conversation=OuterRef("pk"), name=Timeline.DEFAULT_NAME
    )
    compactions = Compaction.objects.filter(**of_conversation)
    return (
        Conversation.objects.select_related("tenant")
        .annotate(
            turn_count=Coalesce(
                _count(Block.objects.filter(**of_conversation, type=b.TURN_HEADER), "timeline__conversation"),
                0,
            ),
            block_count=Coalesce(block_count_of(timeline__conversation=OuterRef("pk")), 0),
            visible_tokens=Coalesce(
                Subquery(main.values("visible_tokens")[:1], output_field=IntegerField()), 0
            ),
            compaction_count=Coalesce(
                _count(compactions.filter(status=Compaction.Status.APPLIED), "timeline__conversation"), 0
            ),
            last_compaction_status=Subquery(compactions.order_by("-id").values("status")[:1]),
            usage_cost=_usage_sum("cost_usd", DecimalField(max_digits=30, decimal_places=12)),
            usage_read_tokens=_usage_sum("cache_read_tokens", BigIntegerField()),
            usage_input_tokens=_usage_sum(
                F("uncached_input_tokens")
                + F("cache_read_tokens")
                + F("cache_write_5m_tokens")
                + F("cache_write_1h_tokens"),
                BigIntegerField(),
            ),
        )
        .annotate(
            # The cache-read share of reported input (null: nothing reported), sortable.
            usage_read_share=Case(
                When(usage_input_tokens__gt=0, then=F("usage_read_tokens") * 1.0 / F("usage_input_tokens")),
                default=None,
                output_field=FloatField(),
            )
        )
    )


def _usage_sum(expression: Any, output: Any) -> Subquery:
    """A sum over the conversation's reported usage, as a scalar subquery (index
    ``timeline_usage_conv_at_idx``)."""
    return Subquery(
        RenderUsage.objects.filter(conversation=OuterRef("pk"))
        .order_by()
        .values("conversation")
        .annotate(total=Sum(expression))
        .values("total")[:1],
        output_field=output,
    )


def conversations_with_hidden_blocks(
    queryset: QuerySet[Conversation], *, present: bool
) -> QuerySet[Conversation]:
    hidden = Exists(Block.objects.filter(timeline__conversation=OuterRef("pk"), hidden=True))
    return queryset.filter(hidden if present else ~hidden)


def conversations_with_failed_compaction(
    queryset: QuerySet[Conversation], *, last_only: bool
) -> QuerySet[Conversation]:
    if last_only:
        # ``last_compaction_status`` is annotated by conversation_admin_list().
        return queryset.filter(**{"last_compaction_status": Compaction.Status.FAILED})
    failed = Compaction.objects.filter(timeline__conversation=OuterRef("pk"), status=Compaction.Status.FAILED)
    return queryset.filter(Exists(failed))


def conversations_active_since(
    queryset: QuerySet[Conversation], *, since: datetime
) -> QuerySet[Conversation]:
    return queryset.filter(last_activity_at__gte=since)


# ---------------------------------------------------------------- one conversation


def conversation_lookup(
    *, object_id: str, limit: int = 20, tenant_ids: list[int] | None = None
) -> list[Conversation]:
    """The conversations an admin URL names, with their tenant (one query; two on a miss).

    An integer is the database id (the admin's own links use it); anything else, or an integer no
    conversation has as its id, is a public id as support staff paste it from a ticket. Public ids
    are unique per tenant only, so that may match several (at most ``limit``, oldest first).
    Only conversations of ``tenant_ids`` (``None``: every tenant) are found.
    A string no column can hold (a NUL, which PostgreSQL refuses even in a comparison, or a lone
    surrogate) finds nothing, without a query.
    """
    conversations = in_tenants(Conversation.objects.select_related("tenant"), tenant_ids, via="tenant")
    if object_id.isdecimal() and 0 < int(object_id) <= _MAX_PK:
        by_pk = list(conversations.filter(pk=int(object_id)))
        if by_pk:
            return by_pk
    if storable_problems(object_id):
        return []
    return list(conversations.filter(public_id=object_id).order_by("id")[:limit])


def conversation_timeline(*, conversation: Conversation, name: str) -> Timeline | None:
    """The conversation's context called ``name``, with the conversation attached (no second read)."""
    timeline = Timeline.objects.filter(conversation=conversation, name=name).first()
    if timeline is not None:
        timeline.conversation = conversation
    return timeline


def timeline_render_record(*, timeline: Timeline, record_id: int) -> RenderRecord | None:
    """One recorded render of this timeline (another timeline's id finds nothing), with its
    packed fingerprint."""
    if not 0 < record_id <= _MAX_PK:
        return None
    return RenderRecord.objects.filter(timeline=timeline, pk=record_id).first()


def conversations_main_timelines(*, conversations: QuerySet[Conversation]) -> list[Timeline]:
    """The ``main`` context of each of ``conversations``, with its conversation (the list action)."""
    return list(
        Timeline.objects.filter(
            conversation__in=conversations.values("pk"), name=Timeline.DEFAULT_NAME
        ).select_related("conversation")
    )


def block_payload_size(*, block_id: int) -> int:
    """The size of a block's binary payload in bytes, measured by the database (the bytes stay there)."""
    size = (
        Block.objects.filter(pk=block_id, data__isnull=False)
        .annotate(size=Length("data"))
        .values_list("size", flat=True)
        .first()
    )
    return int(size or 0)


def table_row_estimate(*, queryset: QuerySet[Any]) -> int | None:
    """The planner's row count of the queryset's table (``pg_class.reltuples``), or ``None`` when
    the database is not PostgreSQL. Cheap at any size, and only an estimate."""
    connection = connections[queryset.db]
    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT reltuples::bigint FROM pg_class WHERE oid = %s::regclass",
            [queryset.model._meta.db_table],
        )
        row = cursor.fetchone()
    return int(row[0]) if row else None
