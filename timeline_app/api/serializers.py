"""Input and output serializers of the HTTP API (separate, explicit fields)."""

from __future__ import annotations

import base64
import binascii
from typing import Any, get_args

from django.conf import settings
from rest_framework import serializers

from timeline_app.api.fields import (
    IsoDateTimeStringField,
    StrictBooleanField,
    StrictCharField,
    StrictDictField,
    StrictIntegerField,
    StrictSerializer,
)
from timeline_app.errors import DomainError
from timeline_app.models import Compaction
from timeline_app.rendering.blocks import is_valid_path
from timeline_app.rendering.prefix import CACHE_REASONS
from timeline_app.rendering.settings import SettingsError, validate_overrides
from timeline_app.rendering.ttl import TtlStatus
from timeline_app.selectors.contexts import normalize_strategy

PUBLIC_ID_REGEX = r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}$"
TYPE_REGEX = r"^[a-z][a-z0-9_.\-]{0,63}$"
TURN_ID_REGEX = r"^[A-Za-z0-9][A-Za-z0-9_.:\-]{0,127}$"


def decode_payload(value: str) -> bytes:
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise serializers.ValidationError("not valid base64") from exc
    if len(raw) > settings.TIMELINE_MAX_ATTACHMENT_BYTES:
        raise serializers.ValidationError(
            f"binary payload over the limit of {settings.TIMELINE_MAX_ATTACHMENT_BYTES} bytes"
        )
    return raw


class SettingsField(StrictDictField):
    def to_internal_value(self, data: Any) -> dict[str, Any]:
        value = super().to_internal_value(data)
        try:
            return validate_overrides(value)
        except SettingsError as exc:
            raise serializers.ValidationError(exc.details) from exc


def validate_block_text(value: str) -> str:
    limit = settings.TIMELINE_MAX_BLOCK_TEXT_CHARS
    if len(value) > limit:
        raise serializers.ValidationError(f"text over the limit of {limit} characters")
    return value


def validate_block_path(value: str) -> str:
    if value and not is_valid_path(value):
        raise serializers.ValidationError("a path is '<ar|fi|tc|su|so>:<rest>' without spaces")
    return value


RESERVED_IDS = frozenset({"import"})


def validate_public_id(value: str) -> str:
    if value in RESERVED_IDS:
        raise serializers.ValidationError(f"{value!r} is reserved")
    return value


class ConversationCreateIn(StrictSerializer):
    id = StrictCharField(required=False, regex=PUBLIC_ID_REGEX, validators=[validate_public_id])
    title = StrictCharField(required=False, allow_blank=True, max_length=500, default="")
    settings = SettingsField(required=False, default=dict)


class ConversationOut(serializers.Serializer[Any]):
    id = serializers.CharField(source="public_id")
    title = serializers.CharField()
    started_at = serializers.DateTimeField()
    settings = serializers.DictField()


class ConversationDetailOut(ConversationOut):
    block_count = serializers.IntegerField()
    visible_tokens = serializers.IntegerField()
    contexts = serializers.ListField(child=serializers.CharField())


class ConversationPageOut(serializers.Serializer[Any]):
    results = ConversationOut(many=True)
    next = serializers.CharField(allow_null=True)


class BlockIn(StrictSerializer):
    type = StrictCharField(regex=TYPE_REGEX)
    author = StrictCharField(required=False, allow_blank=True, max_length=64, default="")
    turn_id = StrictCharField(required=False, regex=TURN_ID_REGEX)
    ts: StrictCharField = IsoDateTimeStringField(required=False, max_length=40)
    mime = StrictCharField(required=False, allow_blank=True, max_length=128, default="")
    text = StrictCharField(required=False, allow_blank=True, trim_whitespace=False, default="")
    base64 = StrictCharField(required=False, allow_blank=True, trim_whitespace=False, default="")
    path = StrictCharField(required=False, allow_blank=True, max_length=1024, default="")
    meta = StrictDictField(required=False, default=dict)
    id = StrictCharField(required=False, max_length=128)

    def validate_text(self, value: str) -> str:
        return validate_block_text(value)

    def validate_base64(self, value: str) -> bytes:
        return decode_payload(value) if value else b""

    def validate_path(self, value: str) -> str:
        return validate_block_path(value)


class BlocksIn(StrictSerializer):
    blocks = BlockIn(many=True, allow_empty=False)

    def validate_blocks(self, value: list[dict[str, Any]]) -> list[dict[str, Any]]:
        limit = settings.TIMELINE_MAX_BLOCKS_PER_REQUEST
        if len(value) > limit:
            raise serializers.ValidationError(f"at most {limit} blocks per request")
        return value

    def to_internal_value(self, data: Any) -> Any:
        blocks = data.get("blocks") if isinstance(data, dict) else None
        limit = settings.TIMELINE_MAX_BLOCKS_PER_REQUEST
        if isinstance(blocks, list) and len(blocks) > limit:
            raise serializers.ValidationError({"blocks": [f"at most {limit} blocks per request"]})
        return super().to_internal_value(data)


class BlockOut(serializers.Serializer[Any]):
    seq = serializers.IntegerField()
    id = serializers.CharField(source="client_id", allow_null=True)
    type = serializers.CharField()
    author = serializers.CharField()
    turn_id = serializers.CharField()
    ts = serializers.CharField()
    mime = serializers.CharField()
    text = serializers.CharField()
    base64 = serializers.SerializerMethodField()
    path = serializers.CharField()
    meta = serializers.DictField()
    hidden = serializers.BooleanField()
    replacement_text = serializers.CharField()
    hidden_reason = serializers.CharField()
    tokens = serializers.IntegerField()

    def get_base64(self, obj: Any) -> str:
        return base64.b64encode(bytes(obj.data)).decode() if obj.data else ""


class BlocksOut(serializers.Serializer[Any]):
    blocks = BlockOut(many=True)


class AttachmentIn(StrictSerializer):
    name = StrictCharField(max_length=255, regex=r"^[^/\\\s][^/\\]{0,254}$")
    mime = StrictCharField(max_length=128)
    base64 = StrictCharField(required=False, allow_blank=True, trim_whitespace=False, default="")
    text = StrictCharField(required=False, allow_blank=True, trim_whitespace=False, default="")
    summary = StrictCharField(required=False, allow_blank=True, max_length=2000, default="")

    def validate_base64(self, value: str) -> bytes:
        return decode_payload(value) if value else b""

    def validate_text(self, value: str) -> str:
        return validate_block_text(value)


class TurnIn(StrictSerializer):
    turn_id = StrictCharField(required=False, regex=TURN_ID_REGEX)
    prompt = StrictCharField(allow_blank=True, trim_whitespace=False)
    ts = IsoDateTimeStringField(required=False, max_length=40)
    attachments = AttachmentIn(many=True, required=False, default=list)

    def validate_prompt(self, value: str) -> str:
        return validate_block_text(value)


class RenderIn(StrictSerializer):
    format = serializers.ChoiceField(
        choices=["anthropic", "openai", "text"], required=False, default="anthropic"
    )
    include_sources = StrictBooleanField(required=False, default=False)
    include_announce = StrictBooleanField(required=False, default=False)
    cache_last = StrictBooleanField(required=False, default=True)
    force_sanitize = StrictBooleanField(required=False, default=False)
    system = StrictCharField(
        required=False,
        allow_blank=True,
        trim_whitespace=False,
        help_text="the system prompt (counted, not stored); at most TIMELINE_MAX_BLOCK_TEXT_CHARS characters",
    )
    system_tokens = StrictIntegerField(required=False, min_value=0, max_value=10_000_000)
    max_tokens = StrictIntegerField(required=False, min_value=1_000, max_value=10_000_000)
    announce = serializers.ListField(
        child=StrictCharField(allow_blank=True, max_length=20_000),
        required=False,
        default=list,
        max_length=100,
    )
    exclude_contributions = serializers.ListField(
        child=StrictCharField(regex=TYPE_REGEX), required=False, default=list, max_length=100
    )
    include_only_contributions = serializers.ListField(
        child=StrictCharField(regex=TYPE_REGEX), required=False, default=list, max_length=100
    )
    now = IsoDateTimeStringField(required=False, max_length=40)
    debug = StrictBooleanField(
        required=False,
        default=False,
        help_text="text format: add `debug`, the stream with =>[k] marks (the whole text a second time)",
    )

    def validate_system(self, value: str) -> str:
        return validate_block_text(value)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if "system" in attrs and "system_tokens" in attrs:
            raise serializers.ValidationError({"system_tokens": ["give either system or system_tokens"]})
        return attrs


class CompactionOut(serializers.Serializer[Any]):
    summary_path = serializers.CharField()
    covered_turn_ids = serializers.ListField(child=serializers.CharField())
    split_turn_id = serializers.CharField(allow_null=True)
    before_tokens = serializers.IntegerField()
    after_tokens = serializers.IntegerField()
    compacted_tokens = serializers.IntegerField()


class TokensOut(serializers.Serializer[Any]):
    system = serializers.IntegerField()
    visible = serializers.IntegerField()
    tail = serializers.IntegerField()
    total = serializers.IntegerField()
    max_tokens = serializers.IntegerField()


class PruningOut(serializers.Serializer[Any]):
    status = serializers.ChoiceField(choices=list(get_args(TtlStatus)))
    hidden_paths = serializers.ListField(child=serializers.CharField())


class CacheOut(serializers.Serializer[Any]):
    previous_render_at = serializers.DateTimeField(allow_null=True, help_text="the previous render's time")
    reused_prefix_tokens = serializers.IntegerField(
        help_text="tokens of the longest prefix identical to the previous render's (0 once that render "
        "is older than the cache TTL)"
    )
    first_changed_index = serializers.IntegerField(
        allow_null=True, help_text="index in blocks of the first part that differs (null: none)"
    )
    first_changed_path = serializers.CharField(allow_null=True, help_text="that part's block path")
    reason = serializers.ChoiceField(
        choices=list(CACHE_REASONS),
        help_text="why the prefix changed; the first that applies in the order first_render, "
        "ttl_expired, settings_changed, compacted, hidden, appended_only, other",
    )


class RenderOut(serializers.Serializer[Any]):
    blocks = serializers.ListField(
        child=serializers.DictField(), help_text="content parts, or chat messages (openai)"
    )
    cache_points = serializers.ListField(child=serializers.IntegerField())
    tokens = TokensOut()
    compaction = CompactionOut(allow_null=True)
    pruning = PruningOut()
    cache = CacheOut(help_text="how much of the previous render's prefix the provider's cache could reuse")
    debug = serializers.CharField(
        required=False, help_text="text format with `debug: true` only: the stream with =>[k] marks"
    )


class CompactIn(StrictSerializer):
    force = StrictBooleanField(required=False, default=False)
    wait = StrictBooleanField(required=False, default=False)
    system_tokens = StrictIntegerField(required=False, min_value=0, max_value=10_000_000, default=0)


class CompactResultOut(CompactionOut):
    status = serializers.ChoiceField(choices=Compaction.Outcome.choices)


class CompactQueuedOut(serializers.Serializer[Any]):
    task_id = serializers.CharField()


class HideIn(StrictSerializer):
    path = StrictCharField(max_length=1024)
    replacement_text = StrictCharField(allow_blank=True, trim_whitespace=False, max_length=20_000)

    def validate_path(self, value: str) -> str:
        return validate_block_path(value) or value


class SourceIn(StrictSerializer):
    url = StrictCharField(max_length=2048)
    title = StrictCharField(required=False, allow_blank=True, max_length=1000)
    text = StrictCharField(required=False, allow_blank=True, trim_whitespace=False, max_length=200_000)
    meta = StrictDictField(required=False)


class SourcesIn(StrictSerializer):
    # What SourceIn(many=True, ...) does; the stubs do not know the list-only max_length.
    sources = SourceIn.many_init(allow_empty=False, max_length=1000)

    def validate_sources(self, value: list[dict[str, Any]]) -> list[dict[str, Any]]:
        urls = [item["url"] for item in value]
        if len(urls) != len(set(urls)):
            raise serializers.ValidationError("the same url appears twice")
        return value


class SourceOut(serializers.Serializer[Any]):
    sid = serializers.IntegerField()
    url = serializers.CharField()
    title = serializers.CharField()
    text = serializers.CharField()
    meta = serializers.DictField()


class SourcesPoolOut(serializers.Serializer[Any]):
    sources_pool = SourceOut(many=True)


class BlocksReadOut(serializers.Serializer[Any]):
    blocks = BlockOut(many=True)
    sources_pool = SourceOut(many=True, required=False, help_text="for so:sources_pool[a-b] paths")


class SearchHitOut(serializers.Serializer[Any]):
    seq = serializers.IntegerField()
    type = serializers.CharField()
    turn_id = serializers.CharField()
    path = serializers.CharField()
    hidden = serializers.BooleanField()
    compacted = serializers.BooleanField(help_text="before the latest summary: not in the visible window")
    snippet = serializers.CharField()


class SearchOut(serializers.Serializer[Any]):
    results = SearchHitOut(many=True)


BIGINT_MAX = 2**63 - 1
INT_MAX = 2**31 - 1


class ImportBlockIn(BlockIn):
    seq = StrictIntegerField(min_value=1, max_value=BIGINT_MAX)
    type = StrictCharField(regex=TYPE_REGEX)
    turn_id = StrictCharField(required=False, allow_blank=True, default="", max_length=128)
    ts = IsoDateTimeStringField(required=False, allow_blank=True, default="", max_length=40)
    id = StrictCharField(required=False, allow_null=True, max_length=128)
    hidden = StrictBooleanField(required=False, default=False)
    replacement_text = StrictCharField(required=False, allow_blank=True, trim_whitespace=False, default="")
    hidden_reason = StrictCharField(required=False, allow_blank=True, max_length=32, default="")


class ImportSourceIn(SourceIn):
    sid = StrictIntegerField(min_value=1, max_value=INT_MAX)


class ImportCompactionIn(StrictSerializer):
    summary_seq = StrictIntegerField(min_value=1, max_value=BIGINT_MAX)
    first_retained_seq = StrictIntegerField(min_value=1, max_value=BIGINT_MAX)
    covered_from_seq = StrictIntegerField(required=False, allow_null=True, min_value=0, max_value=BIGINT_MAX)
    covered_to_seq = StrictIntegerField(required=False, allow_null=True, min_value=0, max_value=BIGINT_MAX)
    covered_turn_ids = serializers.ListField(
        child=StrictCharField(max_length=128), required=False, max_length=100_000
    )
    split_turn_id = StrictCharField(required=False, allow_blank=True, max_length=128)
    trigger = serializers.ChoiceField(choices=Compaction.Trigger.choices, required=False)
    before_tokens = StrictIntegerField(required=False, min_value=0, max_value=INT_MAX)
    after_tokens = StrictIntegerField(required=False, min_value=0, max_value=INT_MAX)
    compacted_tokens = StrictIntegerField(required=False, min_value=0, max_value=INT_MAX)
    summarizer = StrictCharField(required=False, allow_blank=True, max_length=32)
    model = StrictCharField(required=False, allow_blank=True, max_length=100)


class TimelineImportIn(StrictSerializer):
    id = StrictCharField(
        required=False,
        regex=PUBLIC_ID_REGEX,
        validators=[validate_public_id],
        help_text="the new conversation's id",
    )
    kind = serializers.ChoiceField(choices=["conv.timeline.v1"], required=False)
    version = StrictIntegerField(min_value=1, max_value=1)
    ts = StrictCharField(required=False, allow_blank=True)
    conversation_id = StrictCharField(required=False, allow_blank=True)
    conversation_title = StrictCharField(required=False, allow_blank=True, max_length=500, default="")
    conversation_started_at = IsoDateTimeStringField(required=False)
    # The serializer metaclass moves declared fields off the class, so the Field.context property stays.
    context = StrictCharField(required=False)  # type: ignore[assignment]
    settings = SettingsField(required=False, default=dict)
    view_start_seq = StrictIntegerField(required=False, min_value=0, max_value=BIGINT_MAX, default=0)
    compaction_strategy = StrictDictField(required=False, default=dict)
    blocks = ImportBlockIn(many=True, allow_empty=True)

    def validate_compaction_strategy(self, value: dict[str, Any]) -> dict[str, Any]:
        if not value:
            return value
        try:
            return normalize_strategy(value)
        except DomainError as exc:
            raise serializers.ValidationError(exc.details) from exc

    sources_pool = ImportSourceIn.many_init(required=False, default=list, max_length=10_000)
    turn_ids = serializers.ListField(child=StrictCharField(allow_blank=True), required=False)
    compactions = ImportCompactionIn.many_init(required=False, default=list, max_length=10_000)

    def to_internal_value(self, data: Any) -> Any:
        # The cap is checked before any block is validated: an oversized import costs nothing.
        blocks = data.get("blocks") if isinstance(data, dict) else None
        limit = settings.TIMELINE_MAX_IMPORT_BLOCKS
        if isinstance(blocks, list) and len(blocks) > limit:
            raise serializers.ValidationError({"blocks": [f"at most {limit} blocks per import"]})
        return super().to_internal_value(data)
