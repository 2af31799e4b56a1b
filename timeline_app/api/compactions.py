"""A context's compactions: the list (newest first) and one by its public id, the id the 202 of
``POST …/compact/`` names."""

from __future__ import annotations

from typing import Any, cast

from drf_spectacular.utils import OpenApiParameter, extend_schema_field
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from timeline_app.api.auth import ApiClient
from timeline_app.api.base import TenantView, validated_query
from timeline_app.api.fields import StrictCharField, page_limit_field
from timeline_app.api.schema import ApiSchema, operation
from timeline_app.api.timelines import next_url
from timeline_app.domain.identifiers import COMPACTION_ID_PATTERN
from timeline_app.errors import NotFound
from timeline_app.models import Compaction, Timeline
from timeline_app.selectors.listing import compaction_get, compactions_page
from timeline_app.services.compaction import compaction_revert

MAIN = Timeline.DEFAULT_NAME
NULLABLE_STRING = {"type": "string", "nullable": True}


def compaction_url(request: Request, compaction: Compaction) -> str:
    """``…/compactions/{id}/`` beside the request's own path (``…/compact/`` or ``…/compactions/``)."""
    base = request.path.rsplit("/compact", 1)[0]
    return request.build_absolute_uri(f"{base}/compactions/{compaction.public_id}/")


COMPACTION_PARAM = OpenApiParameter(
    "compaction",
    str,
    OpenApiParameter.PATH,
    pattern=COMPACTION_ID_PATTERN.pattern,
    description="A compaction's id (`cmp_…`), as the 202 of `compact` or the list gave it.",
)


class CompactionRecordOut(serializers.Serializer[Any]):
    """From a ``Compaction`` row (its summary block loaded); ``context``: ``request``."""

    id = serializers.CharField(source="public_id")
    url = serializers.SerializerMethodField()
    status = serializers.ChoiceField(
        choices=Compaction.Status.choices,
        help_text="queued (its task not started yet), running, or final: applied, rejected, skipped, "
        "failed; reverted (applied, then taken back by `…/revert/`)",
    )
    trigger = serializers.ChoiceField(choices=Compaction.Trigger.choices)
    before_tokens = serializers.IntegerField()
    after_tokens = serializers.IntegerField()
    compacted_tokens = serializers.IntegerField()
    threshold_tokens = serializers.IntegerField(
        allow_null=True,
        help_text="the tokens above which the context compacts (threshold × max_tokens) as this attempt "
        "planned: with before and after, the numbers that decided it (null on rows from before it)",
    )
    summary_path = serializers.SerializerMethodField(help_text="the summary block's path (applied only)")
    covered_turn_ids = serializers.ListField(child=serializers.CharField())
    split_turn_id = serializers.SerializerMethodField()
    covered_from_seq = serializers.IntegerField(allow_null=True)
    covered_to_seq = serializers.IntegerField(allow_null=True)
    first_retained_seq = serializers.IntegerField(allow_null=True)
    summarizer = serializers.CharField()
    model = serializers.CharField()
    started_at = serializers.DateTimeField(help_text="when its run claimed it (while queued: when asked for)")
    finished_at = serializers.DateTimeField(allow_null=True)
    duration_ms = serializers.IntegerField()
    error = serializers.CharField(
        help_text="why it failed, was rejected or skipped (with the numbers that decided it: tokens "
        "before, after, the threshold), or the summarizer's fallback"
    )
    reverted_at = serializers.DateTimeField(allow_null=True, help_text="when it was reverted (reverted only)")
    reverted_by = serializers.CharField(
        help_text="who reverted it: an API key's prefix or a staff user's name (reverted only)"
    )

    @extend_schema_field({"type": "string", "format": "uri"})
    def get_url(self, row: Compaction) -> str:
        return compaction_url(self.context["request"], row)

    @extend_schema_field(NULLABLE_STRING)
    def get_summary_path(self, row: Compaction) -> str | None:
        return row.summary_block.path if row.summary_block is not None else None

    @extend_schema_field(NULLABLE_STRING)
    def get_split_turn_id(self, row: Compaction) -> str | None:
        return row.split_turn_id or None


class CompactionsPageOut(serializers.Serializer[Any]):
    results = CompactionRecordOut(many=True)
    next = serializers.URLField(allow_null=True, help_text="the next page, or null on the last one")


class CompactionsQueryIn(serializers.Serializer[Any]):
    cursor = StrictCharField(
        required=False,
        regex=COMPACTION_ID_PATTERN.pattern,
        help_text="`cursor` of the previous page's `next`: the id of the last compaction it showed",
    )
    limit = page_limit_field()


class ListSchema(ApiSchema):
    """Its path differs from the detail view's only by a parameter: name the operation a list."""

    def get_operation_id(self) -> str:
        return str(super().get_operation_id()).removesuffix("_retrieve") + "_list"


class CompactionListView(TenantView):
    """The context's compactions, newest first (cursor-paginated)."""

    schema = ListSchema()

    @operation(
        summary="List the context's compactions, newest first",
        description="Each with its status, trigger, tokens before/after, summary path, covered "
        "turns, times and error. `{results, next}`; a `cursor` that names no compaction of this "
        "context is a 404.",
        parameters=[CompactionsQueryIn],
        responses={200: CompactionsPageOut},
    )
    def get(self, request: Request, conv: str, context: str = MAIN) -> Response:
        query = validated_query(CompactionsQueryIn, request)
        timeline = self.timeline(request, conv, context)
        page = compactions_page(timeline=timeline, before=query.get("cursor"), limit=query["limit"])
        following = None
        if page.has_more:
            following = next_url(request, {"cursor": page.rows[-1].public_id, "limit": query["limit"]})
        body = {"results": page.rows, "next": following}
        return Response(CompactionsPageOut(body, context={"request": request}).data)


class CompactionDetailView(TenantView):
    """One compaction of the context, by the id the 202 of ``compact`` gave."""

    @operation(
        summary="A compaction of the context (follow a queued one to its outcome)",
        parameters=[COMPACTION_PARAM],
        responses={200: CompactionRecordOut},
        errors=(401, 404),
    )
    def get(self, request: Request, conv: str, compaction: str, context: str = MAIN) -> Response:
        timeline = self.timeline(request, conv, context)
        row = compaction_get(timeline=timeline, public_id=compaction)
        if row is None:
            raise NotFound(f"no compaction {compaction!r} in this context", details={"id": compaction})
        return Response(CompactionRecordOut(row, context={"request": request}).data)


class CompactionRevertView(TenantView):
    """Take the context's newest applied compaction back."""

    @operation(
        summary="Revert the context's newest applied compaction",
        description="The next render is byte for byte what it would have been before the compaction "
        "(blocks, cache points, tokens); the summary block stays stored, hidden as `reverted`; the "
        "compaction's status becomes `reverted` with `reverted_by` and `reverted_at`. Only the "
        "newest applied compaction can be reverted: any other is a 409 whose `details.revertible` "
        "names the one that can. Reverting a reverted compaction is a 200 that changes nothing.",
        parameters=[COMPACTION_PARAM],
        request=None,
        responses={200: CompactionRecordOut},
        errors=(401, 404, 409),
    )
    def post(self, request: Request, conv: str, compaction: str, context: str = MAIN) -> Response:
        timeline = self.timeline(request, conv, context)
        actor = f"key:{cast(ApiClient, request.user).key.prefix}"
        row = compaction_revert(timeline=timeline, public_id=compaction, actor=actor)
        return Response(CompactionRecordOut(row, context={"request": request}).data)
