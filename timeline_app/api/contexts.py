"""Named contexts and their OpenAI-format messages (seed 004, DESIGN §5): thin views.

* ``GET/POST/DELETE …/{conv}/contexts/{name}/messages/`` (and ``…/{conv}/messages/`` for main)
* ``POST …/{conv}/contexts/{name}/messages/pop/``
* ``GET/POST …/{conv}/contexts/``, ``GET/PUT/PATCH …/{conv}/contexts/{name}/``
* ``GET …/{conv}/full-context/?labels=main,attempt``
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import transaction
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from timeline_app import selectors
from timeline_app.api.base import SMALL_BODY_BYTES, TenantView, validated_body, validated_query
from timeline_app.api.fields import StrategyField, StrictCharField, StrictSerializer
from timeline_app.api.openai_schema import MESSAGE_SCHEMA, STORED_MESSAGE_SCHEMA
from timeline_app.api.schema import operation
from timeline_app.domain import identifiers
from timeline_app.domain import messages as msg
from timeline_app.models import Timeline
from timeline_app.services import contexts as context_services
from timeline_app.services import messages as message_services

MAIN = Timeline.DEFAULT_NAME
NAME_REGEX = identifiers.CONTEXT_NAME_PATTERN.pattern
LABEL_REGEX = identifiers.LABEL_PATTERN.pattern
# A `labels` value: context names separated by commas, blanks around them ignored.
LABELS_REGEX = rf"^\s*({identifiers.CONTEXT_NAME})?\s*(,\s*({identifiers.CONTEXT_NAME})?\s*)*$"

# ---------------------------------------------------------------- serializers


@extend_schema_field(MESSAGE_SCHEMA)
class MessageField(serializers.JSONField):
    """One OpenAI chat message; checked whole by ``services.messages.parse_messages``."""


class MessagesIn(StrictSerializer):
    messages = serializers.ListField(
        child=MessageField(),
        allow_empty=False,
        max_length=settings.TIMELINE_MAX_BLOCKS_PER_REQUEST,
        help_text=(
            "OpenAI chat messages (roles user, assistant, tool, system), each optionally with "
            "`message_id` and `timestamp` (ISO-8601)"
        ),
    )


@extend_schema_field(STORED_MESSAGE_SCHEMA)
class StoredMessageOut(serializers.Field):  # type: ignore[type-arg]
    """From a ``StoredMessage``: the message as given, plus ``timestamp`` and ``message_id``."""

    def to_representation(self, value: msg.StoredMessage) -> dict[str, Any]:
        return value.as_dict()


class MessagesOut(serializers.Serializer[Any]):
    messages = serializers.ListField(
        child=StoredMessageOut(), help_text="each message as given, plus `timestamp` and `message_id`"
    )


class ContextOut(serializers.Serializer[Any]):
    name = serializers.CharField()
    created_at = serializers.DateTimeField()
    compaction_strategy = serializers.DictField()
    message_count = serializers.IntegerField(help_text="messages in the context's view")
    stored_message_count = serializers.IntegerField(help_text="messages stored, cleared ones included")


class ContextListOut(serializers.Serializer[Any]):
    contexts = ContextOut(many=True)


class ContextCreateIn(StrictSerializer):
    openapi_extra = {"oneOf": [{"required": ["label"]}, {"required": ["name"]}]}

    # The serializer metaclass moves declared fields off the class, so Field.label stays a str.
    label = StrictCharField(  # type: ignore[assignment]
        required=False, regex=LABEL_REGEX, help_text="creates `label_a`, `label_b`, …"
    )
    name = StrictCharField(required=False, regex=NAME_REGEX, help_text="an exact name instead of a label")
    branch_from = StrictCharField(required=False, regex=NAME_REGEX, help_text="copy this context's view")
    compaction_strategy = StrategyField(required=False)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if ("label" in attrs) == ("name" in attrs):
            raise serializers.ValidationError({"label": ["give either label or name"]})
        return attrs


class ContextUpdateIn(StrictSerializer):
    compaction_strategy = StrategyField(
        help_text=(
            '`{"name": "summarize"}` (default), `{"name": "truncate_oldest", "max_messages": N}`, '
            '`{"name": "sliding_window", "window_size": N, "keep_system": true}` or a custom one'
        )
    )


class ContextPatchIn(ContextUpdateIn):
    compaction_strategy = StrategyField(required=False)


class LabelsQueryIn(serializers.Serializer[Any]):
    labels = serializers.ListField(
        child=StrictCharField(allow_blank=True, regex=LABELS_REGEX),
        required=False,
        default=list,
        help_text="comma-separated labels: contexts named `label` or `label_…` (all when empty)",
    )

    def validate_labels(self, value: list[str]) -> list[str]:
        return [label.strip() for item in value for label in item.split(",") if label.strip()]


# ---------------------------------------------------------------- views


class MessagesView(TenantView):
    """A named context's OpenAI-format messages: its view, appending, clearing."""

    @operation(
        summary="List the context's messages (its view: since the last clear, strategy applied)",
        responses={200: MessagesOut},
        errors=(401, 404),
    )
    def get(self, request: Request, conv: str, context: str = MAIN) -> Response:
        messages = selectors.context_view(timeline=self.timeline(request, conv, context))
        return Response(MessagesOut({"messages": messages}).data)

    @operation(
        summary="Append OpenAI-format messages (creates the context on first use)",
        description="A message whose `message_id` is stored already (with the same message) comes "
        "back as stored. 201 when something was created; 200 when every message replays a known "
        "id (nothing written).",
        request=MessagesIn,
        responses={201: MessagesOut, 200: MessagesOut},
        errors=(400, 401, 404, 409),
    )
    @transaction.atomic(durable=True)
    def post(self, request: Request, conv: str, context: str = MAIN) -> Response:
        data = validated_body(MessagesIn, request)
        new = message_services.parse_messages(data["messages"])
        timeline = self.timeline_for_write(request, conv, context)
        stored, created = message_services.messages_store(timeline=timeline, messages=new)
        code = status.HTTP_201_CREATED if created else status.HTTP_200_OK
        return Response(MessagesOut({"messages": stored}).data, status=code)

    @operation(
        summary="Clear the context's view (the messages stay stored)",
        responses={204: None},
        errors=(401, 404),
    )
    @transaction.atomic(durable=True)
    def delete(self, request: Request, conv: str, context: str = MAIN) -> Response:
        context_services.context_clear(timeline=self.timeline(request, conv, context))
        return Response(status=status.HTTP_204_NO_CONTENT)


class MessagePopView(TenantView):
    """Take the newest message out of a context's view (the Agents SDK's ``pop_item``)."""

    max_body_bytes = SMALL_BODY_BYTES  # no body

    @operation(
        summary="Pop the newest message out of the context's view (it stays stored); answers it, or none",
        request=None,
        responses={200: MessagesOut},
        errors=(401, 404),
    )
    @transaction.atomic(durable=True)
    def post(self, request: Request, conv: str, context: str = MAIN) -> Response:
        popped = message_services.message_pop(timeline=self.timeline(request, conv, context))
        return Response(MessagesOut({"messages": [popped] if popped is not None else []}).data)


class ContextListView(TenantView):
    """The conversation's contexts with their message counts, and creating one."""

    max_body_bytes = SMALL_BODY_BYTES  # a name or label and a strategy

    @operation(
        summary="List the conversation's contexts with their message counts",
        responses={200: ContextListOut},
        errors=(401, 404),
        operation_id="contexts_list",
    )
    def get(self, request: Request, conv: str) -> Response:
        infos = selectors.context_infos(conversation=self.conversation(request, conv))
        return Response(ContextListOut({"contexts": infos}).data)

    @operation(
        summary="Create a context: `label` → the next free `label_a`, `label_b`, …; optional branch",
        request=ContextCreateIn,
        responses={201: ContextOut},
        errors=(400, 401, 404, 409),
        operation_id="contexts_create",
    )
    @transaction.atomic(durable=True)
    def post(self, request: Request, conv: str) -> Response:
        data = validated_body(ContextCreateIn, request)
        timeline = context_services.context_create(
            conversation=self.conversation(request, conv),
            name=data.get("name"),
            label=data.get("label"),
            branch_from=data.get("branch_from"),
            compaction_strategy=data.get("compaction_strategy"),
        )
        return Response(
            ContextOut(selectors.context_info(timeline=timeline)).data, status=status.HTTP_201_CREATED
        )


class ContextDetailView(TenantView):
    """One context: its compaction strategy and message counts."""

    max_body_bytes = SMALL_BODY_BYTES  # a strategy

    @operation(
        summary="A context", responses={200: ContextOut}, errors=(401, 404), operation_id="contexts_retrieve"
    )
    def get(self, request: Request, conv: str, context: str) -> Response:
        info = selectors.context_info(timeline=self.timeline(request, conv, context))
        return Response(ContextOut(info).data)

    @operation(
        summary="Set the context's compaction strategy (creates the context on first use)",
        request=ContextUpdateIn,
        responses={200: ContextOut},
        operation_id="contexts_update",
    )
    def put(self, request: Request, conv: str, context: str) -> Response:
        return self._update(request, conv, context, ContextUpdateIn)

    @operation(
        summary="Change the context's compaction strategy (creates the context on first use)",
        request=ContextPatchIn,
        responses={200: ContextOut},
        operation_id="contexts_partial_update",
    )
    def patch(self, request: Request, conv: str, context: str) -> Response:
        return self._update(request, conv, context, ContextPatchIn)

    @transaction.atomic(durable=True)
    def _update(
        self, request: Request, conv: str, context: str, serializer: type[StrictSerializer]
    ) -> Response:
        data = validated_body(serializer, request)  # a bad strategy is a 400 before anything is created
        timeline = self.timeline_for_write(request, conv, context)
        if "compaction_strategy" in data:
            context_services.context_set_strategy(
                timeline=timeline, compaction_strategy=data["compaction_strategy"]
            )
        return Response(ContextOut(selectors.context_info(timeline=timeline)).data)


class FullContextView(TenantView):
    """What a supervisor reads: the messages of several contexts merged in time order."""

    @operation(
        summary="Messages of several contexts, deduplicated by message_id, in time order",
        parameters=[LabelsQueryIn],
        responses={200: MessagesOut},
        operation_id="full_context_retrieve",
    )
    def get(self, request: Request, conv: str) -> Response:
        labels = validated_query(LabelsQueryIn, request)["labels"]
        messages = selectors.full_context(conversation=self.conversation(request, conv), labels=labels)
        return Response(MessagesOut({"messages": messages}).data)
