"""A timeline's blocks: start a turn, contribute, read back or list, hide and unhide, search, the
sources pool.

Each view serves ``…/{conv}/<sub-path>/`` (the ``main`` context) and
``…/{conv}/contexts/{context}/<sub-path>/``.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.db import transaction
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from timeline_app import selectors
from timeline_app.api import serializers as s
from timeline_app.api.base import SMALL_BODY_BYTES, TenantView, validated_body, validated_query
from timeline_app.api.schema import operation
from timeline_app.domain.contributions import NewAttachment, NewBlock
from timeline_app.errors import NotFound
from timeline_app.models import Timeline
from timeline_app.selectors.listing import blocks_page
from timeline_app.services.blocks import Appended, blocks_store, turn_store
from timeline_app.services.hiding import blocks_hide, blocks_unhide
from timeline_app.services.sources import sources_merge

MAIN = Timeline.DEFAULT_NAME
DEFAULT_PAGE = 50


def next_url(request: Request, params: dict[str, Any]) -> str:
    """This path again with ``params`` as its query: the next page of a listing."""
    return request.build_absolute_uri(f"{request.path}?{urlencode(params)}")


def _new_block(item: dict[str, Any]) -> NewBlock:
    return NewBlock(
        type=item["type"],
        author=item["author"],
        turn_id=item.get("turn_id"),
        ts=item.get("ts"),
        mime=item["mime"],
        text=item["text"],
        data=item["base64"] or b"",  # an omitted base64 is the field's default "", not bytes
        path=item["path"],
        meta=item["meta"],
        client_id=item.get("id"),
    )


def written(appended: Appended) -> int:
    """201 when the write created something, 200 when every item was a replay of a known id."""
    return status.HTTP_201_CREATED if appended.created else status.HTTP_200_OK


REPLAY_NOTE = (
    "201 when something was created; 200 when every item replays a known id (the stored rows, "
    "nothing written)"
)


def _new_attachment(item: dict[str, Any]) -> NewAttachment:
    return NewAttachment(
        name=item["name"],
        mime=item["mime"],
        data=item["base64"] or b"",
        text=item["text"],
        summary=item["summary"],
    )


class TurnsView(TenantView):
    """A turn's header, its ``user.prompt`` and one block per attachment, with seed paths."""

    @operation(
        summary="Start a turn: header, user.prompt and attachment blocks",
        description=f"Starting a known `turn_id` again answers its stored blocks; with another "
        f"prompt, `ts` or attachments it is a 409 and nothing is stored. {REPLAY_NOTE}.",
        request=s.TurnIn,
        responses={201: s.BlocksOut, 200: s.BlocksOut},
        errors=(400, 401, 404, 409),
    )
    @transaction.atomic(durable=True)
    def post(self, request: Request, conv: str, context: str = MAIN) -> Response:
        data = validated_body(s.TurnIn, request)
        appended = turn_store(
            timeline=self.timeline_for_write(request, conv, context),
            prompt=data["prompt"],
            turn_id=data.get("turn_id"),
            attachments=[_new_attachment(item) for item in data["attachments"]],
            ts=data.get("ts"),
        )
        return Response(s.BlocksOut({"blocks": appended.rows}).data, status=written(appended))


class BlocksView(TenantView):
    """Blocks contributed by the agent (idempotent by block ``id``), and reading them back."""

    @operation(
        summary="Read blocks back by path, compacted ones included (react.read), or list them",
        description="With `path`: the blocks at that path (hidden ones with `include_hidden=1`), or "
        "sources by sid; no block there is a 404. Without `path`: every stored block of the context "
        "in seq order (hidden, compacted and cleared ones included, each with its `hidden` state), "
        "filtered by `type`, `turn_id`, `hidden`, `since_seq`, cursor-paginated: `{blocks, next}`. "
        "A list parameter with `path`, or `include_hidden` without it, is a 400.",
        parameters=[s.BlocksReadQueryIn],
        responses={200: s.BlocksReadOut},
    )
    def get(self, request: Request, conv: str, context: str = MAIN) -> Response:
        query = validated_query(s.BlocksReadQueryIn, request)
        timeline = self.timeline(request, conv, context)
        if "path" not in query:
            return self._list(request, timeline, query)
        path = query["path"]
        sources = selectors.sources_in_path(timeline=timeline, path=path)
        if sources is not None:
            return Response(s.BlocksReadOut({"blocks": [], "sources_pool": sources}).data)
        rows = list(selectors.blocks_by_path(timeline=timeline, path=path))
        if not rows:
            raise NotFound(f"no block at path {path!r}", details={"path": path})
        if not query.get("include_hidden", False):
            rows = [row for row in rows if not row.hidden]
        return Response(s.BlocksReadOut({"blocks": rows}).data)

    def _list(self, request: Request, timeline: Timeline, query: dict[str, Any]) -> Response:
        limit = query.get("limit", DEFAULT_PAGE)
        page = blocks_page(
            timeline=timeline,
            after_seq=max(query.get("since_seq", 0), query.get("cursor", 0)),
            limit=limit,
            type=query.get("type"),
            turn_id=query.get("turn_id"),
            hidden=query.get("hidden"),
        )
        following = None
        if page.has_more:
            kept = {
                name: request.query_params[name] for name in s.LIST_PARAMS if name in request.query_params
            }
            following = next_url(request, {**kept, "cursor": page.rows[-1].seq, "limit": limit})
        return Response(s.BlocksReadOut({"blocks": page.rows, "next": following}).data)

    @operation(
        summary="Contribute blocks (idempotent by block id)",
        description="A block whose `id` is stored already comes back as stored; with another body "
        "(a sent field that differs; an omitted `turn_id`, `ts` or `path` is the stored one) it is a "
        f"409 naming the fields and nothing of the request is stored. {REPLAY_NOTE}.",
        request=s.BlocksIn,
        responses={201: s.BlocksOut, 200: s.BlocksOut},
        errors=(400, 401, 404, 409),
    )
    @transaction.atomic(durable=True)
    def post(self, request: Request, conv: str, context: str = MAIN) -> Response:
        data = validated_body(s.BlocksIn, request)
        timeline = self.timeline_for_write(request, conv, context)
        appended = blocks_store(timeline=timeline, blocks=[_new_block(item) for item in data["blocks"]])
        return Response(s.BlocksOut({"blocks": appended.rows}).data, status=written(appended))


class HideView(TenantView):
    """``react.hide``: the blocks at a path show a replacement text from the next render on."""

    max_body_bytes = SMALL_BODY_BYTES  # a path and a replacement of at most 20,000 characters

    @operation(
        summary="Hide blocks by path behind a replacement text (react.hide)",
        request=s.HideIn,
        responses={200: s.BlocksOut},
    )
    @transaction.atomic(durable=True)
    def post(self, request: Request, conv: str, context: str = MAIN) -> Response:
        data = validated_body(s.HideIn, request)
        timeline = self.timeline(request, conv, context)
        rows = blocks_hide(timeline=timeline, path=data["path"], replacement_text=data["replacement_text"])
        return Response(s.BlocksOut({"blocks": rows}).data)


class UnhideView(TenantView):
    """Undo a hide: the blocks at a path render in full again from the next render on."""

    max_body_bytes = SMALL_BODY_BYTES  # a path

    @operation(
        summary="Show hidden blocks at a path again (undoes react.hide and TTL pruning)",
        description="Every hidden block at `path` is visible again from the next render on, whoever "
        "hid it; visible ones stay as they are, popped messages stay popped. The next render's "
        "`cache.reason` is `hidden` (a block of the previous prefix changed its hide state). A block "
        "TTL pruning had hidden may be pruned again once the prompt cache goes cold. Answers the "
        "blocks at the path; no block there is a 404.",
        request=s.UnhideIn,
        responses={200: s.BlocksOut},
    )
    @transaction.atomic(durable=True)
    def post(self, request: Request, conv: str, context: str = MAIN) -> Response:
        data = validated_body(s.UnhideIn, request)
        timeline = self.timeline(request, conv, context)
        rows = blocks_unhide(timeline=timeline, path=data["path"])
        return Response(s.BlocksOut({"blocks": rows}).data)


class SearchView(TenantView):
    """``react.memsearch``: every stored block of the context, compacted and hidden ones included."""

    @operation(
        summary="Search the context's blocks, compacted and hidden ones included (react.memsearch)",
        parameters=[s.SearchQueryIn],
        responses={200: s.SearchOut},
    )
    def get(self, request: Request, conv: str, context: str = MAIN) -> Response:
        query = validated_query(s.SearchQueryIn, request)["q"]
        timeline = self.timeline(request, conv, context)
        window = selectors.timeline_window(timeline=timeline)
        hits = selectors.blocks_search(timeline=timeline, query=query)
        return Response(s.SearchOut({"results": hits}, context={"query": query, "window": window}).data)


class SourcesView(TenantView):
    """The sources pool; contributed sources merge by URL (existing sids kept, new ones max+1)."""

    @operation(summary="The sources pool", responses={200: s.SourcesPoolOut}, errors=(401, 404))
    def get(self, request: Request, conv: str, context: str = MAIN) -> Response:
        pool = selectors.sources_pool(timeline=self.timeline(request, conv, context))
        return Response(s.SourcesPoolOut({"sources_pool": pool}).data)

    @operation(
        summary="Merge sources by URL (existing sids kept, new rows get max+1)",
        request=s.SourcesIn,
        responses={200: s.SourcesPoolOut},
    )
    @transaction.atomic(durable=True)
    def post(self, request: Request, conv: str, context: str = MAIN) -> Response:
        data = validated_body(s.SourcesIn, request)
        timeline = self.timeline_for_write(request, conv, context)
        pool = sources_merge(timeline=timeline, sources=data["sources"])
        return Response(s.SourcesPoolOut({"sources_pool": pool}).data)
