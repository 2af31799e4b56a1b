"""Input and output serializers of a timeline's render and compact calls (and the compaction
figures an export shares). Inputs reject unknown fields; outputs produce the responses and so
the schema."""

from __future__ import annotations

from typing import Any, get_args

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from timeline_app.api.fields import (
    BlockTextField,
    IsoDateTimeStringField,
    StrictBooleanField,
    StrictCharField,
    StrictIntegerField,
    StrictSerializer,
)
from timeline_app.api.serializers import MODEL_REGEX, TYPE_REGEX
from timeline_app.models import Compaction
from timeline_app.rendering.formats import FORMATS
from timeline_app.rendering.prefix import CACHE_REASONS
from timeline_app.rendering.ttl import TtlStatus


class RenderIn(StrictSerializer):
    openapi_extra = {"not": {"required": ["system", "system_tokens"]}}

    format = serializers.ChoiceField(
        choices=list(FORMATS),
        required=False,
        default="anthropic",
        help_text=(
            "`anthropic` (default), `openai`, `text`: the seed dialect; `anthropic_messages`, "
            "`openai_responses`, `openai_chat`, `gemini_contents`: the provider's own request body with "
            "native tool use, in `request` (docs/native-formats.md)"
        ),
    )
    include_sources = StrictBooleanField(required=False, default=False)
    prefill = StrictBooleanField(
        required=False,
        default=False,
        help_text="`anthropic_messages`, `gemini_contents`: keep the model's message last when the history "
        "ends with it (for models that still take a prefill); by default such a render ends with a user "
        "message of the `continue_text` setting. `ending` in the answer says which happened",
    )
    include_announce = StrictBooleanField(required=False, default=False)
    budget_note = StrictBooleanField(
        required=False,
        allow_null=True,
        default=None,
        help_text="end the uncached tail with one line of the context's budget, e.g. `[context: 61,204 of "
        "200,000 tokens; compaction at 180,000]` (default: the conversation's `budget_note` setting)",
    )
    cache_last = StrictBooleanField(required=False, default=True)
    force_sanitize = StrictBooleanField(required=False, default=False)
    system = BlockTextField(
        required=False,
        help_text=(
            "the system prompt, counted; the native formats also render it (Anthropic `system`, "
            "Responses `instructions`, a first chat system message)"
        ),
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
    model = StrictCharField(
        required=False,
        max_length=100,
        regex=MODEL_REGEX,
        help_text="the model the call will use: the usage forecast applies its minimum cacheable length "
        "(default: TIMELINE_FORECAST_MODEL); for `openai_responses` / `openai_chat`, a model that takes "
        "explicit cache breakpoints (GPT-5.6 and later, `cache_ttls` in the price table) gets "
        "`prompt_cache_options` and `prompt_cache_breakpoint` markers; a retired model is logged once",
    )
    tools_tokens = StrictIntegerField(
        required=False,
        min_value=0,
        max_value=10_000_000,
        default=0,
        help_text="tokens of the tool definitions the call sends (before the system prompt): counted "
        "in the usage forecast and its cache fingerprint",
    )
    debug = StrictBooleanField(
        required=False,
        default=False,
        help_text="text format: add `debug`, the stream with =>[k] marks (the whole text a second time)",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if "system" in attrs and "system_tokens" in attrs:
            raise serializers.ValidationError({"system_tokens": ["give either system or system_tokens"]})
        return attrs


class CompactionFiguresOut(serializers.Serializer[Any]):
    """What a compaction covered and saved: shared by a render's, a compact call's and an export's."""

    covered_turn_ids = serializers.ListField(child=serializers.CharField())
    before_tokens = serializers.IntegerField()
    after_tokens = serializers.IntegerField()
    compacted_tokens = serializers.IntegerField()


class CompactionOut(CompactionFiguresOut):
    summary_path = serializers.CharField()
    split_turn_id = serializers.CharField(allow_null=True)


class TokensOut(serializers.Serializer[Any]):
    system = serializers.IntegerField()
    visible = serializers.IntegerField()
    tail = serializers.IntegerField()
    total = serializers.IntegerField()
    max_tokens = serializers.IntegerField()


class PruningOut(serializers.Serializer[Any]):
    status = serializers.ChoiceField(source="pruning_status", choices=list(get_args(TtlStatus)))
    hidden_paths = serializers.ListField(child=serializers.CharField())


class CacheOut(serializers.Serializer[Any]):
    """From a ``rendering.prefix.CacheReport``."""

    previous_render_at = serializers.DateTimeField(allow_null=True, help_text="the previous render's time")
    reused_prefix_tokens = serializers.IntegerField(
        help_text="tokens of the longest prefix identical to the previous render's (0 once that render "
        "is older than the cache TTL)"
    )
    first_changed_index = serializers.IntegerField(
        allow_null=True, help_text="index in blocks of the first part that differs (null: none)"
    )
    first_changed_path = serializers.CharField(
        allow_null=True, help_text="that part's block path (type#seq for a block without one)"
    )
    reason = serializers.ChoiceField(
        choices=list(CACHE_REASONS),
        help_text="why the prefix changed; the first that applies in the order first_render, "
        "ttl_expired, settings_changed, compacted, hidden, appended_only, other",
    )


class CacheCreationOut(serializers.Serializer[Any]):
    ephemeral_5m_input_tokens = serializers.IntegerField()
    ephemeral_1h_input_tokens = serializers.IntegerField()


class UsageForecastOut(serializers.Serializer[Any]):
    """What the provider will bill this render's input as, by its documented caching rules applied
    to this context's recent renders (Anthropic's usage field names)."""

    provider = serializers.ChoiceField(choices=["anthropic", "openai", "google"])
    model = serializers.CharField(help_text="the model assumed (empty: the provider's default rules)")
    input_tokens = serializers.IntegerField(help_text="every input token of the request")
    cache_read_input_tokens = serializers.IntegerField()
    cache_creation_input_tokens = serializers.IntegerField()
    cache_creation = CacheCreationOut()
    uncached_input_tokens = serializers.IntegerField()
    hit = serializers.BooleanField(help_text="whether any input is read from the cache")


class RenderOut(serializers.Serializer[Any]):
    """From a ``RenderOutcome``."""

    render_id = serializers.CharField(
        allow_null=True, help_text="this render's id: report the call's usage to …/renders/{render_id}/usage/"
    )
    usage_forecast = serializers.SerializerMethodField()

    blocks = serializers.ListField(
        source="rendered.blocks",
        child=serializers.DictField(),
        help_text=(
            "content parts, or chat messages (openai); native formats: the request's message list "
            "(`messages` or `input`)"
        ),
    )
    cache_points = serializers.ListField(
        source="rendered.cache_points",
        child=serializers.IntegerField(),
        help_text="indices in `blocks` of the parts (native: the messages) carrying `cache_control` "
        "(GPT-5.6 OpenAI renders: `prompt_cache_breakpoint`)",
    )
    request = serializers.DictField(
        source="rendered.request",
        required=False,
        help_text=(
            "native formats only: the SDK call's keyword arguments without `model` (`system` + "
            "`messages` for messages.create; `input`, `instructions`, `prompt_cache_key` for "
            "responses.create; `messages`, `prompt_cache_key` for chat.completions.create; `contents`, "
            "`config` for models.generate_content; and `prompt_cache_options` for GPT-5.6 and later)"
        ),
    )
    ending = serializers.ChoiceField(
        source="rendered.ending",
        choices=["user", "continue_text", "prefill", "assistant"],
        allow_null=True,
        help_text="native formats: how the request ends. `user`: with the user's message (or tool "
        "results), as the history does; `continue_text`: the history ended with the model's, so a user "
        "message of the `continue_text` setting was added (`anthropic_messages`, `gemini_contents`); "
        "`prefill`: with the model's, kept last as asked; `assistant`: with the assistant's, as the "
        "history does (the OpenAI formats take that). Null for the seed formats",
    )
    tokens = TokensOut(source="rendered.tokens")
    compaction = CompactionOut(allow_null=True)
    pruning = PruningOut(source="*")
    cache = CacheOut(
        allow_null=True, help_text="how much of the previous render's prefix the provider's cache could reuse"
    )
    ignored_settings = serializers.DictField(
        child=serializers.CharField(),
        help_text="the conversation's stored settings that no longer validate, {key: why}: the render "
        "used their defaults (empty when every stored setting applied)",
    )
    debug = serializers.CharField(
        source="rendered.debug",
        required=False,
        help_text="text format with `debug: true` only: the stream with =>[k] marks",
    )

    @extend_schema_field(UsageForecastOut(allow_null=True))
    def get_usage_forecast(self, outcome: Any) -> dict[str, Any] | None:
        forecast = outcome.forecast
        return forecast.as_dict() if forecast is not None else None

    def to_representation(self, instance: Any) -> dict[str, Any]:
        body = dict(super().to_representation(instance))
        if body.get("debug") is None or not self.context.get("debug"):
            body.pop("debug", None)
        if body.get("request") is None:
            body.pop("request", None)
        return body


class CompactIn(StrictSerializer):
    force = StrictBooleanField(required=False, default=False)
    wait = StrictBooleanField(required=False, default=False)
    system_tokens = StrictIntegerField(required=False, min_value=0, max_value=10_000_000, default=0)


class CompactQueuedOut(serializers.Serializer[Any]):
    id = serializers.CharField(help_text="the compaction's id: `GET …/compactions/{id}/`")
    url = serializers.URLField(help_text="that compaction's URL")
    status = serializers.ChoiceField(
        choices=Compaction.Status.choices, help_text="`queued`, or where the compaction already is"
    )
    task_id = serializers.CharField(help_text="the Celery task's id")
