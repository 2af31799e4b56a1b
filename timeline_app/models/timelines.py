"""Timelines (a conversation's named contexts) and the window each one shows (DESIGN §3)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict

from django.db import models
from django.db.models import Case, Count, F, IntegerField, OuterRef, Q, Subquery, Sum, Value, When
from django.db.models.functions import Coalesce, Greatest

from timeline_app.models.blocks import Block, effective_tokens
from timeline_app.models.compactions import Compaction
from timeline_app.models.owned import OwnedModel, OwnedQuerySet, owner_key
from timeline_app.models.tenants import Conversation, Tenant


class TimelineQuerySet(OwnedQuerySet["Timeline"]):
    def with_window(self) -> TimelineQuerySet:
        """Each timeline annotated with its visible window, in the same query (no N+1):

        * ``window_first_seq``: ``Timeline.window_start`` of the latest applied compaction
          (``max(view_start_seq, its first retained seq)``);
        * ``summary_seq``: that compaction's summary block when ``Timeline.shows_summary``, else
          ``NULL``;
        * ``visible_tokens``: what ``compaction.planner.visible_tokens`` sums over the window
          (``BlockQuerySet.window`` from ``window_first_seq``, plus the shown summary), every block
          at ``effective_tokens()``: the figure the compaction threshold is compared with.

        A render's ``tokens.visible`` can differ from ``visible_tokens`` in three ways, all decided
        at render time: the ``[TURN …] (continued)`` header a window that starts mid-turn shows
        (``compaction.planner.rendered_tokens``, a dozen tokens), the hides TTL pruning persists
        during that render, and a named context's strategy (``selectors.strategy_window``).
        """
        latest = Compaction.objects.applied().filter(timeline=OuterRef("pk")).order_by("-id")
        window_sum = Subquery(
            Block.objects.window(timeline=OuterRef("pk"), start=OuterRef("window_first_seq"))
            .order_by()
            .values("timeline")
            .annotate(total=Sum(effective_tokens()))
            .values("total")[:1],
            output_field=IntegerField(),
        )
        # The latest applied compaction's summary, only when it is inside the view.
        shown = Q(summary_block__seq__gte=OuterRef("view_start_seq"))
        summary = latest.annotate(
            shown_seq=Case(When(shown, then=F("summary_block__seq")), output_field=models.BigIntegerField()),
            shown_tokens=Case(
                When(shown, then=effective_tokens("summary_block__")),
                default=Value(0),
                output_field=IntegerField(),
            ),
        )
        return self.annotate(
            window_first_seq=Greatest(
                F("view_start_seq"),
                Coalesce(Subquery(latest.values("first_retained_seq")[:1]), Value(0)),
                output_field=IntegerField(),
            ),
            summary_seq=Subquery(summary.values("shown_seq")[:1]),
        ).annotate(
            visible_tokens=Coalesce(window_sum, 0)
            + Coalesce(Subquery(summary.values("shown_tokens")[:1], output_field=IntegerField()), 0)
        )

    def with_block_count(self) -> TimelineQuerySet:
        """Each timeline annotated with ``block_count``: its stored blocks, cleared, hidden,
        popped and summaries included (the one block count; ``next_seq - 1`` is not one: an
        import keeps its seqs, gaps included)."""
        return self.annotate(block_count=Coalesce(block_count_of(timeline=OuterRef("pk")), 0))


def block_count_of(**where: Any) -> Subquery:
    """``COUNT(*)`` of the blocks ``where`` selects (``timeline=…`` or ``timeline__conversation=…``,
    usually an ``OuterRef``), as a scalar subquery over the ``(timeline, seq)`` index."""
    group = next(iter(where))
    return Subquery(
        Block.objects.filter(**where).order_by().values(group).annotate(n=Count("pk")).values("n")[:1],
        output_field=IntegerField(),
    )


class Timeline(OwnedModel):
    """A named context of a conversation (``main`` by default): one ordered block stream.

    Its visible window is ``[latest summary] + blocks from window_start() on`` (DESIGN §3).
    """

    DEFAULT_NAME = "main"
    owner_parent = "conversation"

    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="timelines")
    tenant = owner_key(Tenant)
    name = models.CharField(max_length=64, default=DEFAULT_NAME)
    next_seq = models.BigIntegerField(default=1)
    # Blocks below this seq were cleared from the context's view (seed 004 ``clear()``); still stored.
    view_start_seq = models.BigIntegerField(default=0)
    cache_last_touch_at = models.DateTimeField(null=True, blank=True)
    version = models.BigIntegerField(default=0)
    compaction_strategy = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = TimelineQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["conversation", "name"], name="timeline_tl_conv_name_uniq"),
        ]

    def __str__(self) -> str:
        return self.name

    def window_start(self, compaction: Compaction | None) -> int:
        """The first seq of the visible window: after the last ``clear()`` and from the latest
        applied compaction's first retained block on."""
        retained = compaction.first_retained_seq if compaction is not None else None
        return max(self.view_start_seq, retained or 0)

    def shows_summary(self, compaction: Compaction | None) -> bool:
        """Whether that compaction's summary block is inside the view (not cleared away)."""
        summary = compaction.summary_block if compaction is not None else None
        return summary is not None and summary.seq >= self.view_start_seq


class WindowAnnotations(TypedDict):
    """What ``TimelineQuerySet.with_window()`` and ``with_block_count()`` add to a timeline row."""

    window_first_seq: int
    summary_seq: int | None
    visible_tokens: int
    block_count: int


if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations

    WindowedTimeline = WithAnnotations[Timeline, WindowAnnotations]
    """A timeline row read through ``with_window().with_block_count()``."""
