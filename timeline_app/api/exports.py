"""``conv.timeline.v1``: export a context, import one as a new conversation (seed 003).

The import serializers bound every number to what the database stores (seqs below 2^63 − 1, so the
timeline's next seq fits its bigint column; sids and token counts below 2^31), so a bad payload is
a 400, never a 500.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.conf import settings
from django.db import transaction
from django.http import StreamingHttpResponse
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from timeline_app.api.base import TenantView, validated_body, validated_query
from timeline_app.api.conversations import ConversationOut, PublicIdField
from timeline_app.api.fields import (
    IsoDateTimeStringField,
    OptionalIsoDateTimeStringField,
    SettingsField,
    StrategyField,
    StrictBooleanField,
    StrictCharField,
    StrictIntegerField,
    StrictSerializer,
    blocks_cap_check,
)
from timeline_app.api.operations import ImportOperationIn, OperationOut
from timeline_app.api.render_serializers import CompactionFiguresOut
from timeline_app.api.renderers import StableJSONRenderer
from timeline_app.api.schema import operation
from timeline_app.api.serializers import TYPE_REGEX, BlockIn, SourceIn, SourceOut
from timeline_app.models import Compaction, Timeline
from timeline_app.services.export import (
    MAX_IMPORT_SEQ,
    MAX_IMPORT_SID,
    timeline_export_stream,
    timeline_import,
)

# The import's bounds are the service's (services.export): an imported conversation can still grow.
MAX_SEQ = MAX_IMPORT_SEQ - 1
MAX_INT = 2**31 - 1


def _seq(*, one_past_the_last: bool = False, **kwargs: Any) -> StrictIntegerField:
    """A block's seq, or (``one_past_the_last``) a position up to the imported ``next_seq``."""
    return StrictIntegerField(max_value=MAX_IMPORT_SEQ if one_past_the_last else MAX_SEQ, **kwargs)


def _tokens() -> StrictIntegerField:
    return StrictIntegerField(required=False, min_value=0, max_value=MAX_INT)


class ImportBlockIn(BlockIn):
    seq = _seq(min_value=1)
    type = StrictCharField(regex=TYPE_REGEX)
    turn_id = StrictCharField(required=False, allow_blank=True, default="", max_length=128)
    ts = OptionalIsoDateTimeStringField(required=False, default="")
    id = StrictCharField(required=False, allow_null=True, max_length=128)
    hidden = StrictBooleanField(required=False, default=False)
    replacement_text = StrictCharField(required=False, allow_blank=True, trim_whitespace=False, default="")
    hidden_reason = StrictCharField(required=False, allow_blank=True, max_length=32, default="")


class ImportSourceIn(SourceIn):
    sid = StrictIntegerField(min_value=1, max_value=MAX_IMPORT_SID - 1)


class ImportCompactionIn(StrictSerializer):
    summary_seq = _seq(min_value=1)
    first_retained_seq = _seq(one_past_the_last=True, min_value=1)
    covered_from_seq = _seq(required=False, allow_null=True, min_value=0)
    covered_to_seq = _seq(required=False, allow_null=True, min_value=0)
    covered_turn_ids = serializers.ListField(
        child=StrictCharField(max_length=128), required=False, max_length=100_000
    )
    split_turn_id = StrictCharField(required=False, allow_blank=True, max_length=128)
    trigger = serializers.ChoiceField(choices=Compaction.Trigger.values, required=False)
    before_tokens = _tokens()
    after_tokens = _tokens()
    compacted_tokens = _tokens()
    summarizer = StrictCharField(required=False, allow_blank=True, max_length=32)
    model = StrictCharField(required=False, allow_blank=True, max_length=100)


class TimelineImportIn(StrictSerializer):
    id = PublicIdField(help_text="the new conversation's id")
    kind = serializers.ChoiceField(choices=["conv.timeline.v1"], required=False)
    version = StrictIntegerField(min_value=1, max_value=1)
    ts = StrictCharField(required=False, allow_blank=True)
    conversation_id = StrictCharField(required=False, allow_blank=True)
    conversation_title = StrictCharField(required=False, allow_blank=True, max_length=500, default="")
    conversation_started_at = IsoDateTimeStringField(required=False)
    # The serializer metaclass moves declared fields off the class, so the Field.context property stays.
    context = StrictCharField(required=False)  # type: ignore[assignment]
    settings = SettingsField(required=False, default=dict)
    view_start_seq = _seq(one_past_the_last=True, required=False, min_value=0, default=0)
    compaction_strategy = StrategyField(required=False, default=dict)
    blocks = ImportBlockIn(many=True, allow_empty=True)
    sources_pool = ImportSourceIn.many_init(required=False, default=list, max_length=10_000)
    turn_ids = serializers.ListField(child=StrictCharField(allow_blank=True), required=False)
    compactions = ImportCompactionIn.many_init(required=False, default=list, max_length=10_000)
    operations = ImportOperationIn.many_init(required=False, default=list, max_length=100_000)

    def to_internal_value(self, data: Any) -> Any:
        blocks_cap_check(data, limit=settings.TIMELINE_MAX_IMPORT_BLOCKS, per="import")
        return super().to_internal_value(data)


class ExportBlockOut(serializers.Serializer[Any]):
    seq = serializers.IntegerField()
    id = serializers.CharField(allow_null=True)
    type = serializers.CharField()
    author = serializers.CharField()
    turn_id = serializers.CharField()
    ts = serializers.CharField()
    mime = serializers.CharField()
    text = serializers.CharField()
    base64 = serializers.CharField()
    path = serializers.CharField()
    meta = serializers.DictField()
    hidden = serializers.BooleanField()
    replacement_text = serializers.CharField()
    hidden_reason = serializers.CharField()


class ExportCompactionOut(CompactionFiguresOut):
    summary_seq = serializers.IntegerField()
    first_retained_seq = serializers.IntegerField(allow_null=True)
    covered_from_seq = serializers.IntegerField(allow_null=True)
    covered_to_seq = serializers.IntegerField(allow_null=True)
    split_turn_id = serializers.CharField()
    trigger = serializers.CharField()
    summarizer = serializers.CharField()
    model = serializers.CharField()


class TimelineExportOut(serializers.Serializer[Any]):
    """The ``conv.timeline.v1`` payload ``timeline_export`` builds."""

    kind = serializers.CharField()
    version = serializers.IntegerField()
    ts = serializers.CharField()
    conversation_id = serializers.CharField()
    conversation_title = serializers.CharField()
    conversation_started_at = serializers.CharField()
    context = serializers.CharField()  # type: ignore[assignment]
    settings = serializers.DictField()
    view_start_seq = serializers.IntegerField()
    compaction_strategy = serializers.DictField()
    blocks = ExportBlockOut(many=True)
    sources_pool = SourceOut(many=True)
    turn_ids = serializers.ListField(child=serializers.CharField())
    compactions = ExportCompactionOut(many=True)
    operations = OperationOut(many=True, help_text="the context's operations log, oldest first")


class ExportQueryIn(serializers.Serializer[Any]):
    window = serializers.ChoiceField(
        choices=["all", "visible"],
        required=False,
        default="all",
        help_text="all blocks, or the visible window",
    )


class TimelineExportView(TenantView):
    """Every stored block (or the visible window), the sources pool and the compaction records."""

    @operation(
        summary="Export the timeline as conv.timeline.v1",
        parameters=[ExportQueryIn],
        responses={200: TimelineExportOut},
    )
    def get(self, request: Request, conv: str, context: str = Timeline.DEFAULT_NAME) -> StreamingHttpResponse:
        window = validated_query(ExportQueryIn, request)["window"]
        timeline = self.timeline(request, conv, context)  # a 404 is answered before the stream starts
        return StreamingHttpResponse(
            export_chunks(timeline=timeline, window=window), content_type="application/json"
        )


STREAM_BLOCKS = 200
"""Blocks written per chunk of the streamed export."""


def export_chunks(*, timeline: Timeline, window: str) -> Iterator[bytes]:
    """The export's body, written as it is read: the bytes ``StableJSONRenderer`` gives for
    ``TimelineExportOut`` of the whole payload (sorted keys at every level), with the blocks
    serialized one by one from a server-side cursor, all in one snapshot (``timeline_export_stream``)."""
    renderer = StableJSONRenderer()
    with timeline_export_stream(timeline=timeline, window=window) as export:
        head = TimelineExportOut({**export.head, "blocks": [], "turn_ids": []}).data
        block_out = ExportBlockOut()
        turn_ids_field = TimelineExportOut().fields["turn_ids"]
        yield b"{"
        for i, key in enumerate(sorted(head)):
            prefix = ("," if i else "") + renderer.text(key) + ":"
            if key == "blocks":
                parts = [prefix + "["]
                for n, block in enumerate(export.blocks()):
                    parts.append(("," if n else "") + renderer.text(block_out.to_representation(block)))
                    if len(parts) >= STREAM_BLOCKS:
                        yield "".join(parts).encode()
                        parts = []
                yield ("".join(parts) + "]").encode()
            elif key == "turn_ids":
                yield (prefix + renderer.text(turn_ids_field.to_representation(export.turn_ids))).encode()
            else:
                yield (prefix + renderer.text(head[key])).encode()
        yield b"}"


class TimelineImportView(TenantView):
    """A new conversation from an export (the export's own ids are not reused)."""

    @operation(
        summary="Create a conversation from a conv.timeline.v1 payload",
        request=TimelineImportIn,
        responses={201: ConversationOut},
        errors=(400, 401, 409),
        operation_id="conversations_import",
    )
    @transaction.atomic(durable=True)
    def post(self, request: Request) -> Response:
        data = validated_body(TimelineImportIn, request)
        conversation = timeline_import(tenant=self.tenant(request), payload=data, public_id=data.get("id"))
        return Response(ConversationOut(conversation).data, status=status.HTTP_201_CREATED)
