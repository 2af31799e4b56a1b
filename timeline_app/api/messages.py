"""Named contexts and their OpenAI-format messages (seed 004, DESIGN §5): thin views.

* ``GET/POST/DELETE …/{conv}/contexts/{name}/messages/`` (and ``…/{conv}/messages/`` for main)
* ``GET/POST …/{conv}/contexts/``, ``GET/PUT/PATCH …/{conv}/contexts/{name}/``
* ``GET …/{conv}/full-context/?labels=main,attempt``
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from timeline_app import selectors
from timeline_app.api.fields import StrictCharField, StrictDictField, StrictSerializer
from timeline_app.api.views import CONTEXT_PARAM, ERROR_RESPONSES, TenantView, _validated
from timeline_app.errors import InvalidInput
from timeline_app.models import Timeline
from timeline_app.rendering import messages as msg
from timeline_app.services import contexts as context_services
from timeline_app.services import messages as message_services

NAME_REGEX = msg.CONTEXT_NAME_PATTERN.pattern
LABEL_REGEX = msg.LABEL_PATTERN.pattern

# ---------------------------------------------------------------- serializers


class MessagesIn(StrictSerializer):
    messages = serializers.ListField(
        child=serializers.JSONField(),
        help_text=(
            "OpenAI chat messages (roles user, assistant, tool, system), each optionally with "
            "`message_id` and `timestamp` (ISO-8601)"
        ),
    )


class MessagesOut(serializers.Serializer[Any]):
    messages = serializers.ListField(
        child=serializers.DictField(), help_text="each message as given, plus `timestamp` and `message_id`"
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
    # The serializer metaclass moves declared fields off the class, so Field.label stays a str.
    label = StrictCharField(  # type: ignore[assignment]
        required=False, regex=LABEL_REGEX, help_text="creates `label_a`, `label_b`, …"
    )
    name = StrictCharField(required=False, regex=NAME_REGEX, help_text="an exact name instead of a label")
    branch_from = StrictCharField(required=False, regex=NAME_REGEX, help_text="copy this context's view")
    compaction_strategy = StrictDictField(required=False)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if ("label" in attrs) == ("name" in attrs):
            raise serializers.ValidationError({"label": ["give either label or name"]})
        return attrs


class ContextUpdateIn(StrictSerializer):
    compaction_strategy = StrictDictField(
        help_text=(
            '`{"name": "summarize"}` (default), `{"name": "truncate_oldest", "max_messages": N}`, '
            '`{"name": "sliding_window", "window_size": N, "keep_system": true}` or a custom one'
        )
    )


class ContextPatchIn(ContextUpdateIn):
    compaction_strategy = StrictDictField(required=False)


def _context_body(info: selectors.ContextInfo) -> dict[str, Any]:
    return dict(ContextOut(info).data)


def _messages_body(messages: list[msg.StoredMessage]) -> dict[str, Any]:
    return {"messages": [m.as_dict() for m in messages]}


# ---------------------------------------------------------------- views


class MessagesView(TenantView):
    @extend_schema(
        parameters=[CONTEXT_PARAM],
        responses={200: MessagesOut, **ERROR_RESPONSES},
        summary="List the context's messages (its view: since the last clear, strategy applied)",
    )
    def get(self, request: Request, conv: str, context: str = Timeline.DEFAULT_NAME) -> Response:
        timeline = self.timeline(request, conv, context)
        return Response(_messages_body(selectors.context_view(timeline=timeline)))

    @extend_schema(
        request=MessagesIn,
        parameters=[CONTEXT_PARAM],
        responses={201: MessagesOut, 409: OpenApiResponse(description="message_id taken"), **ERROR_RESPONSES},
        summary="Append OpenAI-format messages (creates the context on first use)",
    )
    def post(self, request: Request, conv: str, context: str = Timeline.DEFAULT_NAME) -> Response:
        data = _validated(MessagesIn, request.data)
        new = message_services.parse_messages(data["messages"])
        timeline = self.timeline_for_write(request, conv, context)
        stored = message_services.messages_append(timeline=timeline, messages=new)
        return Response(_messages_body(stored), status=status.HTTP_201_CREATED)

    @extend_schema(
        parameters=[CONTEXT_PARAM],
        responses={204: None, **ERROR_RESPONSES},
        summary="Clear the context's view (the messages stay stored)",
    )
    def delete(self, request: Request, conv: str, context: str = Timeline.DEFAULT_NAME) -> Response:
        context_services.context_clear(timeline=self.timeline(request, conv, context))
        return Response(status=status.HTTP_204_NO_CONTENT)


class ContextListView(TenantView):
    @extend_schema(
        responses={200: ContextListOut, **ERROR_RESPONSES},
        summary="List the conversation's contexts with their message counts",
        operation_id="contexts_list",
    )
    def get(self, request: Request, conv: str) -> Response:
        infos = selectors.context_infos(conversation=self.conversation(request, conv))
        return Response({"contexts": [_context_body(i) for i in infos]})

    @extend_schema(
        request=ContextCreateIn,
        responses={201: ContextOut, 409: OpenApiResponse(description="name taken"), **ERROR_RESPONSES},
        summary="Create a context: `label` → the next free `label_a`, `label_b`, …; optional branch",
        operation_id="contexts_create",
    )
    def post(self, request: Request, conv: str) -> Response:
        data = _validated(ContextCreateIn, request.data)
        timeline = context_services.context_create(
            conversation=self.conversation(request, conv),
            name=data.get("name"),
            label=data.get("label"),
            branch_from=data.get("branch_from"),
            compaction_strategy=data.get("compaction_strategy"),
        )
        return Response(
            _context_body(selectors.context_info(timeline=timeline)), status=status.HTTP_201_CREATED
        )


class ContextDetailView(TenantView):
    @extend_schema(
        responses={200: ContextOut, **ERROR_RESPONSES}, summary="A context", operation_id="contexts_retrieve"
    )
    def get(self, request: Request, conv: str, context: str) -> Response:
        return Response(_context_body(selectors.context_info(timeline=self.timeline(request, conv, context))))

    @extend_schema(
        request=ContextUpdateIn,
        responses={200: ContextOut, **ERROR_RESPONSES},
        summary="Set the context's compaction strategy (creates the context on first use)",
        operation_id="contexts_update",
    )
    def put(self, request: Request, conv: str, context: str) -> Response:
        return self._update(request, conv, context, ContextUpdateIn)

    @extend_schema(
        request=ContextPatchIn,
        responses={200: ContextOut, **ERROR_RESPONSES},
        summary="Change the context's compaction strategy (creates the context on first use)",
        operation_id="contexts_partial_update",
    )
    def patch(self, request: Request, conv: str, context: str) -> Response:
        return self._update(request, conv, context, ContextPatchIn)

    def _update(
        self, request: Request, conv: str, context: str, serializer: type[StrictSerializer]
    ) -> Response:
        data = _validated(serializer, request.data)
        if "compaction_strategy" in data:
            selectors.normalize_strategy(data["compaction_strategy"])  # 400 before anything is created
        timeline = self.timeline_for_write(request, conv, context)
        if "compaction_strategy" in data:
            context_services.context_set_strategy(
                timeline=timeline, compaction_strategy=data["compaction_strategy"]
            )
        return Response(_context_body(selectors.context_info(timeline=timeline)))


def _labels(request: Request) -> list[str]:
    labels = [
        label.strip()
        for value in request.query_params.getlist("labels")
        for label in value.split(",")
        if label.strip()
    ]
    bad = [label for label in labels if not msg.CONTEXT_NAME_PATTERN.match(label)]
    if bad:
        raise InvalidInput("invalid label", details={"labels": bad})
    return labels


class FullContextView(TenantView):
    @extend_schema(
        parameters=[
            OpenApiParameter(
                "labels",
                str,
                description="comma-separated labels: contexts named `label` or `label_…` (all when empty)",
            )
        ],
        responses={200: MessagesOut, **ERROR_RESPONSES},
        summary="Messages of several contexts, deduplicated by message_id, in time order",
        operation_id="full_context_retrieve",
    )
    def get(self, request: Request, conv: str) -> Response:
        conversation = self.conversation(request, conv)
        return Response(
            _messages_body(selectors.full_context(conversation=conversation, labels=_labels(request)))
        )
