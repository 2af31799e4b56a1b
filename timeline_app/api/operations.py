"""A context's operations log (issue 35): ``GET …/operations/``, newest first, filtered by kind and
time; and the entry's shape in the export and import (``conv.timeline.v1``'s ``operations``)."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from timeline_app.api.base import TenantView, validated_query
from timeline_app.api.fields import (
    DollarsField,
    IsoDateTimeStringField,
    StrictCharField,
    StrictIntegerField,
    StrictSerializer,
    page_limit_field,
)
from timeline_app.api.schema import operation
from timeline_app.api.timelines import next_url
from timeline_app.api.usage import RangeTimeField, UsageRangeIn
from timeline_app.domain.identifiers import COMPACTION_ID, OPERATION_ID_PATTERN
from timeline_app.domain.operations import KINDS, MAX_ACTOR, MAX_PATHS, MAX_RANGES, UnknownKinds, parse_kinds
from timeline_app.models import Timeline
from timeline_app.selectors.listing import operations_page
from timeline_app.services.export import operation_payload

MAIN = Timeline.DEFAULT_NAME
MAX_SEQ = 2**63 - 1
KIND_HELP = "one of: " + ", ".join(KINDS)


class OperationOut(serializers.Serializer[Any]):
    """One entry, as ``services.export.operation_payload`` gives it."""

    id = serializers.CharField(help_text="the entry's id (`op_…`): the `cursor` of the next page")
    at = serializers.CharField(help_text="when (ISO-8601, UTC)")
    kind = serializers.ChoiceField(choices=list(KINDS))
    actor = serializers.CharField(
        help_text="who: `key:<prefix>` (an API key), `staff:<name>` (the admin) or `system` (the worker, "
        "the beat, commands)"
    )
    tokens_before = serializers.IntegerField(
        allow_null=True,
        help_text="compactions, reverts and TTL prunes: the context's visible tokens before it; hides, "
        "unhides: the blocks' tokens before",
    )
    tokens_after = serializers.IntegerField(allow_null=True, help_text="the same, after it")
    seq_ranges = serializers.ListField(
        child=serializers.ListField(child=serializers.IntegerField(), min_length=2, max_length=2),
        help_text="the seqs it affected as [first, last] ranges (what a compaction covered, a prune hid)",
    )
    paths = serializers.ListField(child=serializers.CharField(), help_text=f"the paths (at most {MAX_PATHS})")
    compaction_id = serializers.CharField(help_text="the compaction's id (compaction operations), else empty")
    model = serializers.CharField(help_text="the summary's model (compaction operations)")
    cost_usd = serializers.CharField(
        allow_null=True, help_text="the summary call's cost in dollars, a decimal"
    )
    details = serializers.DictField(
        help_text="why, with its numbers: `reason` and `threshold_tokens` of a compaction, `settings` "
        "{key: [before, after]} of a settings change, `branched_from`, `paths_omitted`…"
    )


class OperationsPageOut(serializers.Serializer[Any]):
    results = OperationOut(many=True)
    next = serializers.URLField(allow_null=True, help_text="the next page, or null on the last one")


class OperationsQueryIn(UsageRangeIn):
    since = RangeTimeField(
        required=False,
        help_text="operations at or after: an ISO-8601 date (midnight UTC) or time, or epoch seconds",
    )
    until = RangeTimeField(required=False, help_text="operations before: the same forms as since")
    kind = serializers.ListField(
        child=serializers.CharField(max_length=400),
        required=False,
        max_length=len(KINDS),
        help_text=f"only these kinds: repeat the parameter or give a comma list; {KIND_HELP}",
    )
    cursor = StrictCharField(
        required=False,
        regex=OPERATION_ID_PATTERN.pattern,
        help_text="`cursor` of the previous page's `next`: the id of the last entry it showed",
    )
    limit = page_limit_field()  # type: ignore[assignment]

    def validate_kind(self, value: list[str]) -> tuple[str, ...]:
        try:
            return parse_kinds(value)
        except UnknownKinds as exc:
            raise serializers.ValidationError(f"unknown kind {', '.join(exc.unknown)}; {KIND_HELP}") from exc


class OperationListView(TenantView):
    """The context's operations log, newest first (cursor-paginated)."""

    @operation(
        summary="List the context's operations log, newest first",
        description="Every operation that changed what the model sees: compaction applied / rejected / "
        "skipped / failed / reverted, TTL prune, hide, unhide, import, settings change, context created "
        "/ cleared / branched, messages erased; each with its time, actor, tokens before and after, the "
        "seqs and paths affected and, for a compaction, its id, model, cost and the numbers that decided "
        "it. Filters: `kind`, `since` (inclusive), `until` (exclusive). `{results, next}`; a `cursor` "
        "that names no entry of this context is a 404.",
        parameters=[OperationsQueryIn],
        responses={200: OperationsPageOut},
    )
    def get(self, request: Request, conv: str, context: str = MAIN) -> Response:
        query = validated_query(OperationsQueryIn, request)
        timeline = self.timeline(request, conv, context)
        page = operations_page(
            timeline=timeline,
            before=query.get("cursor"),
            limit=query["limit"],
            kinds=query.get("kind", ()),
            since=query.get("since"),
            until=query.get("until"),
        )
        following = None
        if page.has_more:
            params: dict[str, Any] = {"cursor": page.rows[-1].public_id, "limit": query["limit"]}
            for name in ("kind", "since", "until"):
                if request.query_params.get(name):
                    params[name] = ",".join(request.query_params.getlist(name))
            following = next_url(request, params)
        body = {"results": [operation_payload(row) for row in page.rows], "next": following}
        return Response(OperationsPageOut(body).data)


class ImportOperationIn(StrictSerializer):
    """An entry of an exported log (imported as it was, under a new id)."""

    id = StrictCharField(required=False, regex=OPERATION_ID_PATTERN.pattern)
    at = IsoDateTimeStringField()
    kind = serializers.ChoiceField(choices=list(KINDS))
    actor = StrictCharField(required=False, max_length=MAX_ACTOR, default="system")
    tokens_before = StrictIntegerField(required=False, allow_null=True, min_value=0, max_value=MAX_SEQ)
    tokens_after = StrictIntegerField(required=False, allow_null=True, min_value=0, max_value=MAX_SEQ)
    seq_ranges = serializers.ListField(
        child=serializers.ListField(
            child=StrictIntegerField(min_value=0, max_value=MAX_SEQ), min_length=2, max_length=2
        ),
        required=False,
        max_length=MAX_RANGES,
    )
    paths = serializers.ListField(
        child=StrictCharField(max_length=1024), required=False, max_length=MAX_PATHS
    )
    compaction_id = StrictCharField(required=False, allow_blank=True, regex=f"^({COMPACTION_ID})?$")
    model = StrictCharField(required=False, allow_blank=True, max_length=100)
    cost_usd = DollarsField(required=False, allow_null=True)
    details = serializers.DictField(required=False)
