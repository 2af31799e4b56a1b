"""Cost: the usage a client reports per render, a conversation's totals, the tenant's usage."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from django.utils import timezone
from drf_spectacular.utils import extend_schema_field
from rest_framework import mixins, serializers, status
from rest_framework.generics import GenericAPIView
from rest_framework.request import Request
from rest_framework.response import Response

from timeline_app import selectors
from timeline_app.api.base import USAGE_BODY_BYTES, TenantView, validated_body, validated_query
from timeline_app.api.fields import StrictCharField, StrictDictField, StrictSerializer
from timeline_app.api.pagination import ConversationCursorPagination
from timeline_app.api.schema import operation
from timeline_app.api.serializers import MODEL_REGEX
from timeline_app.errors import InvalidInput
from timeline_app.models import Conversation, RenderUsage
from timeline_app.rendering.usage.reported import CACHE_MISS_REASONS
from timeline_app.selectors.usage import TOTALS
from timeline_app.services.usage import render_usage_report, usage_summary

MISSES_LISTED = 50


def dollars(value: Decimal | None) -> str | None:
    """Exact decimal dollars as a plain string (no exponent, no trailing zeros)."""
    return None if value is None else format(value.normalize(), "f")


class UsageReportIn(StrictSerializer):
    usage = StrictDictField(
        help_text="the provider's usage object as the SDK returns it: Anthropic Messages `usage`, "
        "OpenAI Chat Completions `usage`, OpenAI Responses `usage`, or Gemini `usage_metadata` (kept as "
        "snake_case counts, without the per-modality lists)"
    )
    model = StrictCharField(max_length=100, regex=MODEL_REGEX, help_text="the model the call used")
    cache_miss_reason = serializers.ChoiceField(
        choices=list(CACHE_MISS_REASONS), required=False, allow_null=True, help_text="Anthropic's, when given"
    )


class TokensByKindOut(serializers.Serializer[Any]):
    uncached_input = serializers.IntegerField(source="uncached_input_tokens")
    cache_read = serializers.IntegerField(source="cache_read_tokens")
    cache_write_5m = serializers.IntegerField(source="cache_write_5m_tokens")
    cache_write_1h = serializers.IntegerField(source="cache_write_1h_tokens")
    output = serializers.IntegerField(source="output_tokens")


class ForecastTokensOut(serializers.Serializer[Any]):
    cache_read = serializers.IntegerField(source="forecast_read_tokens")
    cache_write_5m = serializers.IntegerField(source="forecast_write_5m_tokens")
    cache_write_1h = serializers.IntegerField(source="forecast_write_1h_tokens")
    uncached_input = serializers.IntegerField(source="forecast_uncached_tokens")


# Which render a usage row is about (a comment, not a docstring: the schema would show it).
class RenderRefOut(serializers.Serializer[Any]):
    render_id = serializers.CharField(source="render_public_id")
    context_name = serializers.CharField(source="timeline.name", help_text="the context rendered")
    rendered_at = serializers.DateTimeField()


class UsageOut(RenderRefOut):
    """From a ``RenderUsage``."""

    reported_at = serializers.DateTimeField()
    provider = serializers.CharField()
    model = serializers.CharField()
    priced_model = serializers.CharField(help_text="the price table's entry (empty: not priced)")
    tokens = TokensByKindOut(source="*")
    forecast = ForecastTokensOut(source="*")
    cost_usd = serializers.SerializerMethodField()
    cost_without_cache_usd = serializers.SerializerMethodField()
    unexplained_miss = serializers.BooleanField(
        help_text="the forecast promised a cache read the provider did not give"
    )
    cache_miss_reason = serializers.CharField()
    first_changed_path = serializers.CharField(
        help_text="where the prefix first changed (the cache explainer)"
    )
    compacted_tokens = serializers.IntegerField()
    pruned_tokens = serializers.IntegerField()

    def get_cost_usd(self, row: RenderUsage) -> str | None:
        return dollars(row.cost_usd)

    def get_cost_without_cache_usd(self, row: RenderUsage) -> str | None:
        return dollars(row.cost_without_cache_usd)


class UsageTotalsTokensOut(serializers.Serializer[Any]):
    uncached_input = serializers.IntegerField()
    cache_read = serializers.IntegerField()
    cache_write_5m = serializers.IntegerField()
    cache_write_1h = serializers.IntegerField()
    output = serializers.IntegerField()


class UsageTotalsOut(serializers.Serializer[Any]):
    renders = serializers.IntegerField(help_text="reported renders")
    input_tokens = serializers.IntegerField()
    tokens = UsageTotalsTokensOut()
    cost_usd = serializers.CharField(help_text="dollars, exact")
    cost_without_cache_usd = serializers.CharField(
        help_text="what the same calls cost with no prompt caching"
    )
    saved_usd = serializers.CharField()
    unpriced_renders = serializers.IntegerField(
        help_text="reported with a model the price table does not list"
    )
    cache_read_share = serializers.FloatField(help_text="cache-read tokens / input tokens")
    forecast_read_tokens = serializers.IntegerField()
    forecast_accuracy = serializers.FloatField(
        allow_null=True, help_text="share of renders whose forecast agreed (hit vs miss, read within 1 %)"
    )
    unexplained_misses = serializers.IntegerField()
    compacted_tokens = serializers.IntegerField()
    pruned_tokens = serializers.IntegerField()


class MissOut(RenderRefOut):
    forecast_read_tokens = serializers.IntegerField()
    cache_read_tokens = serializers.IntegerField()
    cache_miss_reason = serializers.CharField()
    first_changed_path = serializers.CharField()


class ConversationUsageOut(UsageTotalsOut):
    misses = MissOut(many=True, help_text=f"the newest {MISSES_LISTED} unexplained misses")


class UsageReportView(TenantView):
    """What the provider billed for one render (idempotent)."""

    max_body_bytes = USAGE_BODY_BYTES  # a model, a reason and an SDK usage object

    @operation(
        summary="Report the provider's usage for a render",
        request=UsageReportIn,
        responses={201: UsageOut, 200: UsageOut},
        errors=(400, 401, 404, 409),
    )
    def post(self, request: Request, conv: str, render_id: str, context: str = "main") -> Response:
        body = request.data
        if not isinstance(body, dict):
            raise InvalidInput("the request body must be a JSON object")
        validated_body(UsageReportIn, request)
        timeline = self.timeline(request, conv, context)
        row, created = render_usage_report(
            timeline=timeline, render_id=render_id, body=body, now=timezone.now()
        )
        row.timeline = timeline
        return Response(UsageOut(row).data, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)


class ConversationUsageView(TenantView):
    """Totals of a conversation (all its contexts), or of one named context."""

    @operation(
        summary="Usage totals: tokens by kind, cost, savings, forecast accuracy, unexplained misses",
        responses={200: ConversationUsageOut},
        errors=(401, 404),
    )
    def get(self, request: Request, conv: str, context: str | None = None) -> Response:
        conversation = self.conversation(request, conv)
        timeline = selectors.timeline_require(conversation=conversation, name=context) if context else None
        rows = selectors.conversation_usages(conversation=conversation, timeline=timeline)
        body = usage_summary(selectors.usage_totals(rows))
        body["misses"] = selectors.unexplained_misses(rows=rows, limit=MISSES_LISTED)
        return Response(ConversationUsageOut(body).data)


EPOCH_MIN, EPOCH_MAX = 946_684_800, 4_102_444_800
"""The epoch seconds a usage range may name as a number: 2000-01-01 to 2100-01-01 (UTC); below it a
number is more likely a basic ISO date (20260301) than a time of 1970."""
ISO_DAY = r"[0-9]{4}-[0-9]{2}-[0-9]{2}"
RANGE_TIME_PATTERN = (
    rf"^({ISO_DAY}(T[0-9]{{2}}:[0-9]{{2}}(:[0-9]{{2}}(\.[0-9]{{1,6}})?)?(Z|[+-][0-9]{{2}}:[0-9]{{2}})?)?"
    rf"|[0-9]{{1,10}})$"
)


@extend_schema_field({"type": "string", "pattern": RANGE_TIME_PATTERN})
class RangeTimeField(serializers.Field):  # type: ignore[type-arg]
    """A usage range's bound: an ISO-8601 date (midnight UTC) or time (UTC unless it carries an
    offset), or whole epoch seconds from ``EPOCH_MIN`` (2000-01-01) to ``EPOCH_MAX`` (2100-01-01).
    Anything else is a 400 (empty: no bound):
    a 20-digit number is no time (Python's ``fromisoformat`` would read it as the year 1111)."""

    def to_internal_value(self, data: Any) -> datetime:
        if not isinstance(data, str) or not re.fullmatch(RANGE_TIME_PATTERN, data):
            raise serializers.ValidationError(
                "an ISO-8601 date or time (2026-03-01, 2026-03-01T12:00:00Z) or epoch seconds"
            )
        if data.isdigit():
            seconds = int(data)
            if not EPOCH_MIN <= seconds <= EPOCH_MAX:
                raise serializers.ValidationError(
                    f"epoch seconds must be between {EPOCH_MIN} (2000-01-01) and {EPOCH_MAX} (2100-01-01)"
                )
            return datetime.fromtimestamp(seconds, tz=UTC)
        try:
            moment = datetime.fromisoformat(data.replace("Z", "+00:00"))
            if moment.tzinfo is None:
                return moment.replace(tzinfo=UTC)
            return moment.astimezone(UTC)  # an offset past year 1 or 9999 overflows here
        except (ValueError, OverflowError) as exc:
            raise serializers.ValidationError(f"not a date or time in range: {exc}") from exc

    def to_representation(self, value: datetime) -> str:
        return value.isoformat()


class UsageRangeIn(serializers.Serializer[Any]):
    since = RangeTimeField(
        required=False,
        help_text="renders at or after: an ISO-8601 date (midnight UTC) or time, or epoch seconds "
        f"({EPOCH_MIN} to {EPOCH_MAX}: 2000-01-01 to 2100-01-01)",
    )
    until = RangeTimeField(required=False, help_text="renders before: the same forms as since")
    cursor = serializers.CharField(required=False)
    limit = serializers.CharField(required=False)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        since, until = attrs.get("since"), attrs.get("until")
        if since is not None and until is not None and since >= until:
            raise serializers.ValidationError({"until": ["must be after since"]})
        return attrs


class ConversationUsageRowOut(UsageTotalsOut):
    id = serializers.CharField(help_text="the conversation's id")
    title = serializers.CharField()


def conversation_row(conversation: Conversation) -> dict[str, Any]:
    totals = {key: getattr(conversation, f"usage_{key}") or 0 for key in TOTALS}
    return {"id": conversation.public_id, "title": conversation.title, **usage_summary(totals)}


class TenantUsageView(mixins.ListModelMixin, GenericAPIView[Conversation], TenantView):
    """The caller's usage per conversation over a date range, newest conversation first."""

    pagination_class = ConversationCursorPagination

    def get_queryset(self) -> Any:
        query = validated_query(UsageRangeIn, self.request)
        return selectors.tenant_usage_by_conversation(
            tenant=self.tenant(self.request), since=query.get("since"), until=query.get("until")
        )

    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        page = self.paginate_queryset(self.get_queryset())
        rows = [conversation_row(conversation) for conversation in page or []]
        return self.get_paginated_response(ConversationUsageRowOut(rows, many=True).data)

    @operation(
        summary="The tenant's usage per conversation (renders rendered in [since, until))",
        responses={200: ConversationUsageRowOut(many=True)},
        errors=(400, 401),
        operation_id="usage_list",
    )
    def get(self, request: Request) -> Response:
        return self.list(request)
