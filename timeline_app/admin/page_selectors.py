"""The reads of the support admin's conversation page: its contexts, the paged turns and their
first blocks, the per-turn token chart, the compactions, the operations log and render history, and the blocks a past
render's replay starts from. The list, the lookups and the actions' targets: ``admin.selectors``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict, cast

from django.core.paginator import Page, Paginator
from django.db.models import Count, F, Max, Min, Q, Sum, Window
from django.db.models.functions import Coalesce, Length, RowNumber, Substr

from timeline_app.domain.blocks import Block as BlockValue
from timeline_app.models import Block, Compaction, Conversation, Operation, RenderRecord, Timeline
from timeline_app.selectors.blocks import visible_window
from timeline_app.selectors.contexts import strategy_window
from timeline_app.selectors.renders import render_history

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations

    from timeline_app.models import WindowedTimeline

PREVIEW_CHARS = 240


class TurnBlockAnnotations(TypedDict):
    """What ``turn_blocks()`` adds to each block row instead of its text and payload."""

    text_head: str
    data_size: int


if TYPE_CHECKING:
    ListedBlock = WithAnnotations[Block, TurnBlockAnnotations]
    """A block row read through ``turn_blocks()``."""


def conversation_contexts(*, conversation: Conversation) -> list[WindowedTimeline]:
    """The conversation's named contexts with their window (``with_window``) and block count,
    ``main`` first."""
    rows = Timeline.objects.with_window().with_block_count().filter(conversation=conversation).order_by("id")
    contexts = cast("list[WindowedTimeline]", list(rows))
    contexts.sort(key=lambda t: (t.name != Timeline.DEFAULT_NAME, t.pk))
    return contexts


def timeline_compactions_applied(*, timeline: Timeline) -> list[Compaction]:
    """Applied compactions in timeline order (by first retained block), with their summary blocks (binary payload left out)."""
    return list(
        Compaction.objects.filter(timeline=timeline, status=Compaction.Status.APPLIED)
        .select_related("summary_block")
        .defer("summary_block__data", "digest")
        .order_by("first_retained_seq", "id")
    )


def timeline_compaction_total(*, timeline: Timeline) -> int:
    return Compaction.objects.filter(timeline=timeline).count()


def timeline_turns_page(*, timeline: Timeline, page: int | str | None, per_page: int) -> Page[dict[str, Any]]:
    """A page of the timeline's turns, ordered by their first block (two queries: count, page).

    Turns are the distinct ``turn_id`` values (blocks written outside any turn form the turn
    ``""``); the grouped scan reads ``timeline_block_turn_idx``.
    """
    turns = (
        Block.objects.filter(timeline=timeline)
        .order_by()
        .values("turn_id")
        .annotate(first_seq=Min("seq"), block_total=Count("pk"))
        .order_by("first_seq", "turn_id")
    )
    return Paginator(turns, per_page).get_page(page)


def turn_blocks(*, timeline: Timeline, turn_ids: list[str], per_turn: int) -> list[ListedBlock]:
    """The first ``per_turn`` blocks of each turn, ordered by seq, with a text head instead of the text.

    One query; the full text and the binary payload are never read here (``text_head`` and
    ``data_size`` stand in for them).
    """
    if not turn_ids:
        return []
    ranked = (
        Block.objects.filter(timeline=timeline, turn_id__in=turn_ids)
        .defer("text", "data", "meta")
        .annotate(
            text_head=Substr("text", 1, PREVIEW_CHARS + 1),
            data_size=Coalesce(Length("data"), 0),
            rank=Window(RowNumber(), partition_by=[F("turn_id")], order_by=F("seq").asc()),
        )
        .filter(rank__lte=per_turn)
        .order_by("seq")
    )
    return cast("list[ListedBlock]", list(ranked))


def timeline_turn_tokens(*, timeline: WindowedTimeline, limit: int) -> list[dict[str, Any]]:
    """The latest ``limit`` turns' tokens split into visible / hidden / compacted, oldest first.

    ``timeline`` comes annotated by ``TimelineQuerySet.with_window`` (``conversation_contexts``).
    One grouped query (``timeline_block_turn_idx``), never one per turn: ``compacted`` is every
    block before its ``window_first_seq`` (compacted or cleared: out of the window), ``hidden`` the
    hidden blocks of the visible window and ``visible`` the rest.
    """
    in_window = Q(seq__gte=timeline.window_first_seq)
    rows = (
        Block.objects.filter(timeline=timeline)
        .order_by()
        .values("turn_id")
        .annotate(
            first_seq=Min("seq"),
            last_seq=Max("seq"),
            visible=Coalesce(Sum("tokens", filter=in_window & Q(hidden=False)), 0),
            hidden_tokens=Coalesce(Sum("tokens", filter=in_window & Q(hidden=True)), 0),
            compacted=Coalesce(Sum("tokens", filter=~in_window), 0),
        )
        .order_by("-first_seq")[:limit]
    )
    return list(reversed(list(rows)))


def timeline_operations(*, timeline: Timeline, limit: int) -> list[Operation]:
    """The newest ``limit`` entries of the context's operations log, newest first (one query on
    ``timeline_op_recent_idx``)."""
    return list(Operation.objects.filter(timeline=timeline).order_by("-id")[:limit])


def timeline_render_history(*, timeline: Timeline, limit: int) -> list[RenderRecord]:
    """The newest ``limit`` renders of the timeline, newest first (one query)."""
    return render_history(timeline=timeline, limit=limit)


def timeline_blocks_of_seqs(*, timeline: Timeline, seqs: list[int]) -> list[BlockValue]:
    """The stored blocks of ``seqs`` as pure values with their current hide state (one range
    query over ``(timeline, seq)``)."""
    if not seqs:
        return []
    wanted = set(seqs)
    rows = Block.objects.filter(timeline=timeline, seq__gte=min(wanted), seq__lte=max(wanted)).as_values()
    return [block for block in rows if block.seq in wanted]


def timeline_blocks_of_window(
    *, timeline: Timeline, first_seq: int | None, last_seq: int | None, summary_seq: int | None
) -> list[BlockValue]:
    """The stored blocks of a recorded window's shape (``replay.WindowShape``), with their current
    hide state: those of seq ``first_seq``..``last_seq`` and the summary (one range query over
    ``(timeline, seq)``)."""
    wanted = Q(pk__in=[])
    if first_seq is not None and last_seq is not None:
        wanted |= Q(seq__gte=first_seq, seq__lte=last_seq)
    if summary_seq is not None:
        wanted |= Q(seq=summary_seq)
    return Block.objects.filter(wanted, timeline=timeline).order_by("seq").as_values()


def timeline_window_today(*, timeline: Timeline) -> list[BlockValue]:
    """Today's window of the context, as a render would start from it (before TTL pruning)."""
    return strategy_window(timeline=timeline, window=visible_window(timeline=timeline))
