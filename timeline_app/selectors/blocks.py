"""Reads of blocks: the visible window, token sums, read by path, sources, search."""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import TYPE_CHECKING, Any, cast

from django.conf import settings
from django.contrib.postgres.search import SearchQuery, SearchRank, SearchVectorField
from django.db import connection
from django.db.models import F, Q, QuerySet
from django.db.models.expressions import Expression

from timeline_app.domain import blocks as b
from timeline_app.domain.blocks import Block as BlockValue
from timeline_app.domain.messages import POPPED_REASON
from timeline_app.errors import InvalidInput, NotFound
from timeline_app.models import Block, Compaction, Source, Timeline
from timeline_app.models.blocks import VALUE_FIELDS, block_value

if TYPE_CHECKING:
    from timeline_app.models import WindowedTimeline


def latest_applied_compaction(*, timeline: Timeline) -> Compaction | None:
    return Compaction.objects.latest_applied(timeline=timeline)


# The latest applied compaction's cut and summary, and the window they define, in one statement
# (issue 38: the compaction was a query of its own, with the summary block joined, on every render):
# the blocks from max(view start, first retained seq) on, summaries and popped messages left out
# (``BlockQuerySet.window``), and the summary block itself while the view still shows it
# (``Timeline.window_start``, ``Timeline.shows_summary``). Its first column says which row is it.
# Two branches, and the window's start joined in laterally, so its seq bound stays an index
# condition under row-level security (an OR of both, or a bound computed by a subquery in the
# WHERE clause, is a filter evaluated after the policy: every stored block of the context read).
_WINDOW_SQL = """
WITH latest AS (
    SELECT first_retained_seq, summary_block_id FROM {compactions}
    WHERE timeline_id = %(timeline)s AND status = %(applied)s ORDER BY id DESC LIMIT 1
)
(SELECT true, {summary_columns} FROM {blocks} b
    WHERE b.timeline_id = %(timeline)s AND b.id = (SELECT summary_block_id FROM latest)
        AND b.seq >= %(view)s)
UNION ALL
(SELECT false, {window_columns}
    FROM (SELECT GREATEST(%(view)s, COALESCE(max(first_retained_seq), 0)) AS start FROM latest) s
    CROSS JOIN LATERAL (
        SELECT {columns} FROM {blocks} b
        WHERE b.timeline_id = %(timeline)s AND b.seq >= s.start
            AND b.type <> %(summary)s AND b.hidden_reason <> %(popped)s
        ORDER BY b.seq
    ) w)
"""
_META = VALUE_FIELDS.index("meta")


def _window_in_one_statement(timeline: Timeline) -> list[BlockValue]:
    sql = _WINDOW_SQL.format(
        compactions=Compaction._meta.db_table,
        blocks=Block._meta.db_table,
        columns=", ".join(f"b.{name}" for name in VALUE_FIELDS),
        summary_columns=", ".join(f"b.{name}" for name in VALUE_FIELDS),
        window_columns=", ".join(f"w.{name}" for name in VALUE_FIELDS),
    )
    params: dict[str, Any] = {
        "timeline": timeline.pk,
        "applied": Compaction.Status.APPLIED,
        "view": timeline.view_start_seq,
        "summary": b.SUMMARY,
        "popped": POPPED_REASON,
    }
    summary: list[BlockValue] = []
    window: list[BlockValue] = []
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        for is_summary, *columns in cursor.fetchall():
            if isinstance(columns[_META], str):  # jsonb comes back as text through Django's cursor
                columns[_META] = json.loads(columns[_META])
            (summary if is_summary else window).append(block_value(*columns))
    window.sort(key=_seq)  # in order already (linear on sorted input): not left to UNION ALL
    return [*summary, *window]


def _seq(block: BlockValue) -> int:
    return block.seq


def visible_window(*, timeline: Timeline) -> list[BlockValue]:
    """``[latest summary] + blocks from its first retained block on``, in order (DESIGN §3).

    Only the visible window is read: older blocks stay stored and reachable by path. On
    PostgreSQL one statement (``_WINDOW_SQL``), elsewhere the compaction and then its window.
    """
    if connection.vendor == "postgresql":
        return _window_in_one_statement(timeline)
    return window_by_compaction(timeline=timeline)


def window_by_compaction(*, timeline: Timeline) -> list[BlockValue]:
    """``visible_window`` in two queries: the latest applied compaction, then its window."""
    compaction = latest_applied_compaction(timeline=timeline)
    start = timeline.window_start(compaction)
    window = Block.objects.window(timeline=timeline, start=start).order_by("seq").as_values()
    if compaction is not None and compaction.summary_block is not None and timeline.shows_summary(compaction):
        return [compaction.summary_block.to_value(), *window]
    return window


def timeline_window(*, timeline: Timeline) -> WindowedTimeline:
    """The timeline's row annotated by ``TimelineQuerySet.with_window`` (``window_first_seq``,
    ``summary_seq``, ``visible_tokens``) and ``with_block_count``: one query."""
    return cast("WindowedTimeline", Timeline.objects.with_window().with_block_count().get(pk=timeline.pk))


def timeline_visible_tokens(*, timeline: Timeline) -> int:
    """``visible_tokens`` of ``timeline_window`` (one query)."""
    return timeline_window(timeline=timeline).visible_tokens


def blocks_by_path(*, timeline: Timeline, path: str) -> QuerySet[Block]:
    return Block.objects.filter(timeline=timeline, path=path).order_by("seq")


def tokens_from_seq(*, timeline: Timeline, seq: int) -> int:
    """Tokens of the non-summary blocks from ``seq`` on (what a compaction retains)."""
    return Block.objects.window(timeline=timeline, start=max(seq, timeline.view_start_seq)).effective_tokens()


def sources_pool(*, timeline: Timeline) -> list[Source]:
    return list(Source.objects.filter(timeline=timeline).order_by("sid"))


def active_plan(*, timeline: Timeline) -> BlockValue | None:
    """The latest ``react.plan`` block, visible or not: the plan announced at render (seed 003)."""
    row = Block.objects.filter(timeline=timeline, type=b.PLAN).order_by("-seq").first()
    return row.to_value() if row is not None else None


def sources_in_path(*, timeline: Timeline, path: str) -> list[Source] | None:
    """Rows a ``so:sources_pool[3,5-6]`` selector names, by ascending sid, each once; None when
    ``path`` is no sources path. A malformed selector is invalid input; a sid or range that names
    no source is not found, with the terms in ``details["unknown_sids"]``."""
    try:
        selector = b.parse_sources_selector(path)
    except b.SelectorError as exc:
        raise InvalidInput(str(exc), details=exc.details) from None
    if selector is None:
        return None
    named = Q()
    for first, last in selector.terms:
        named |= Q(sid__gte=first, sid__lte=last)
    rows = list(Source.objects.filter(named, timeline=timeline).order_by("sid"))
    unknown = selector.unknown_terms(row.sid for row in rows)
    if unknown:
        raise NotFound(
            f"no source for {', '.join(unknown)} in {path!r}", details={"path": path, "unknown_sids": unknown}
        )
    return rows


def _check_tsquery(query: str) -> None:
    """A query the GIN index can answer, or InvalidInput (400).

    ``numnode`` 0: nothing to search for (only punctuation or quotes: ``!!!``, ``-``). ``querytree``
    ``T``: no word that must occur (only negated words, ``-foo -bar``, or an ``or`` with a negated
    side, ``foo or -bar``): the index cannot narrow it, so PostgreSQL would read and rank every block
    of the timeline (3.4 s on a 73-million-character conversation, against 0.01-0.5 s for a search).
    """
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT numnode(q), querytree(q)::text FROM websearch_to_tsquery('simple', %s) AS q", [query]
        )
        nodes, tree = cursor.fetchone()
    if nodes == 0:
        raise InvalidInput(
            "the query has no words to search for", details={"q": "no words, only punctuation"}
        )
    if tree == "T":
        raise InvalidInput(
            "the query needs a word that must occur: only negated words (-foo) would match every block",
            details={"q": "at least one word that is not negated, on every side of an 'or'"},
        )


class BlockSearchVector(Expression):
    """A block's ``tsvector`` on PostgreSQL: exactly the expression the GIN index
    ``timeline_block_search_idx`` is built on (migration 0011), so the planner matches through it,
    written against the query's own alias of the block table (so it also works inside a subquery,
    ``U0``, as the admin's search across conversations needs)."""

    output_field = SearchVectorField()

    def as_sql(self, compiler: Any, connection: Any) -> tuple[str, list[Any]]:
        alias = compiler.quote_name_unless_alias(compiler.query.get_initial_alias())
        return (
            f"to_tsvector('simple'::regconfig, left({alias}.\"text\", 100000) || ' ' || {alias}.\"path\")",
            [],
        )


def blocks_matching(rows: QuerySet[Block], *, query: str) -> QuerySet[Block]:
    """``rows`` narrowed to the blocks whose text matches ``query``, unordered: the search index on
    PostgreSQL (``websearch_to_tsquery``, ``simple``; a query the index cannot narrow is
    InvalidInput), every word in the text or the path on SQLite. The admin's search across
    conversations uses it; ``blocks_search`` is the ranked search of one timeline."""
    if connection.vendor == "postgresql":
        _check_tsquery(query)
        search = SearchQuery(query, search_type="websearch", config="simple")
        return rows.annotate(vector=BlockSearchVector()).filter(vector=search)
    for word in query.split():
        rows = rows.filter(Q(text__icontains=word) | Q(path__icontains=word))
    return rows


def blocks_search(*, timeline: Timeline, query: str, limit: int | None = None) -> list[Block]:
    """Blocks of the timeline matching ``query``, hidden and compacted ones included (``react.memsearch``),
    at most ``limit`` (default ``TIMELINE_MAX_SEARCH_RESULTS``).

    PostgreSQL: full-text search (``websearch_to_tsquery``, ``simple`` configuration, ranked) through
    the GIN expression index over the text and path: the matching rows are found in the index, and
    only they are parsed again to rank them (no vector is stored beside the text).
    A query the index cannot narrow (no words, or only negated ones) is a 400 (``_check_tsquery``).
    SQLite (embedded): every word must occur in the text or the path, case-insensitively (a leading
    ``-`` is part of the word: no operators).
    """
    limit = min(limit or settings.TIMELINE_MAX_SEARCH_RESULTS, settings.TIMELINE_MAX_SEARCH_RESULTS)
    rows = Block.objects.filter(timeline=timeline).defer("data")
    if connection.vendor == "postgresql":
        _check_tsquery(query)
        search = SearchQuery(query, search_type="websearch", config="simple")
        return list(
            rows.annotate(vector=BlockSearchVector())
            .filter(vector=search)
            .annotate(rank=SearchRank(F("vector"), search))
            .order_by("-rank", "seq")[:limit]
        )
    for word in query.split():
        rows = rows.filter(Q(text__icontains=word) | Q(path__icontains=word))
    return list(rows.order_by("seq")[:limit])


def block_is_compacted(*, seq: int, type: str, window: WindowedTimeline) -> bool:
    """Whether a stored block is outside the visible window of ``window`` (a timeline annotated by
    ``with_window``): before its first seq (compacted or cleared), or a summary other than the one
    it shows (what search marks ``compacted``)."""
    return seq < window.window_first_seq or (type == b.SUMMARY and seq != window.summary_seq)


def tool_calls_by_id(*, timeline: Timeline, call_ids: Collection[str]) -> dict[str, Block]:
    """The stored ``react.tool.call`` of each id in ``call_ids`` (by ``meta.tool_call_id``; the
    latest when an id was used twice), hidden and compacted ones included."""
    if not call_ids:
        return {}
    rows = Block.objects.filter(
        timeline=timeline, type=b.TOOL_CALL, meta__tool_call_id__in=list(call_ids)
    ).order_by("seq")
    return {row.meta["tool_call_id"]: row for row in rows.only("seq", "turn_id", "meta", "type")}
