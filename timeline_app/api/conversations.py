"""Conversations: create, list (cursor-paginated), detail, edit (title, settings), erase."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import transaction
from drf_spectacular.utils import extend_schema_field
from rest_framework import mixins, serializers, status
from rest_framework.generics import GenericAPIView
from rest_framework.request import Request
from rest_framework.response import Response

from timeline_app import selectors
from timeline_app.api.base import SMALL_BODY_BYTES, TenantView, validated_body
from timeline_app.api.fields import SettingsField, StrictCharField, StrictSerializer
from timeline_app.api.pagination import ConversationCursorPagination
from timeline_app.api.schema import CONV_PATTERN, operation
from timeline_app.models import Conversation, Timeline
from timeline_app.services.conversations import (
    conversation_create,
    conversation_delete,
    conversation_update,
)

RESERVED_IDS = frozenset({"import"})


def validate_public_id(value: str) -> str:
    if value in RESERVED_IDS:
        raise serializers.ValidationError(f"{value!r} is reserved")
    return value


@extend_schema_field({"type": "string", "pattern": CONV_PATTERN, "not": {"enum": sorted(RESERVED_IDS)}})
class PublicIdField(StrictCharField):
    def __init__(self, **kwargs: Any):
        super().__init__(required=False, regex=CONV_PATTERN, validators=[validate_public_id], **kwargs)


class ConversationCreateIn(StrictSerializer):
    id = PublicIdField(help_text="the new conversation's id (generated when absent); not `import`")
    title = StrictCharField(required=False, allow_blank=True, max_length=500, default="")
    settings = SettingsField(required=False, default=dict)


class ConversationPatchIn(StrictSerializer):
    title = StrictCharField(required=False, allow_blank=True, max_length=500)
    settings = SettingsField(
        required=False,
        help_text="replaces the whole overrides object (`{}`: back to the defaults), validated like at creation",
    )


class ConversationOut(serializers.Serializer[Any]):
    id = serializers.CharField(source="public_id")
    title = serializers.CharField()
    started_at = serializers.DateTimeField()
    settings = serializers.DictField()


class ConversationDetailOut(ConversationOut):
    block_count = serializers.IntegerField()
    visible_tokens = serializers.IntegerField()
    contexts = serializers.ListField(child=serializers.CharField())


@dataclass(frozen=True)
class ConversationDetail:
    public_id: str
    title: str
    started_at: datetime
    settings: dict[str, Any]
    block_count: int
    visible_tokens: int
    contexts: list[str]


def conversation_detail(conversation: Conversation) -> ConversationDetail:
    timeline = selectors.timeline_window(
        timeline=selectors.timeline_require(conversation=conversation, name=Timeline.DEFAULT_NAME)
    )
    return ConversationDetail(
        public_id=conversation.public_id,
        title=conversation.title,
        started_at=conversation.started_at,
        settings=conversation.settings,
        block_count=timeline.block_count,
        visible_tokens=timeline.visible_tokens,
        contexts=selectors.timeline_names(conversation=conversation),
    )


class ConversationListView(mixins.ListModelMixin, GenericAPIView[Conversation], TenantView):
    """The caller's conversations, newest first, and creating one."""

    max_body_bytes = SMALL_BODY_BYTES  # an id, a title and settings

    pagination_class = ConversationCursorPagination
    serializer_class = ConversationOut

    def get_queryset(self) -> Any:
        return selectors.conversation_list(tenant=self.tenant(self.request))

    @operation(
        summary="List conversations, newest first",
        responses={200: ConversationOut(many=True)},
        operation_id="conversations_list",
    )
    def get(self, request: Request) -> Response:
        return self.list(request)

    @operation(
        summary="Create a conversation",
        request=ConversationCreateIn,
        responses={201: ConversationOut},
        errors=(400, 401, 409),
        operation_id="conversations_create",
    )
    @transaction.atomic(durable=True)
    def post(self, request: Request) -> Response:
        data = validated_body(ConversationCreateIn, request)
        conversation = conversation_create(
            tenant=self.tenant(request),
            public_id=data.get("id"),
            title=data["title"],
            settings=data["settings"],
        )
        return Response(ConversationOut(conversation).data, status=status.HTTP_201_CREATED)


class ConversationDetailView(TenantView):
    """One conversation with its block count, visible tokens and context names; erasing it."""

    max_body_bytes = SMALL_BODY_BYTES  # a title and settings

    @operation(
        summary="A conversation",
        responses={200: ConversationDetailOut},
        errors=(401, 404),
        operation_id="conversations_retrieve",
    )
    def get(self, request: Request, conv: str) -> Response:
        detail = conversation_detail(self.conversation(request, conv))
        return Response(ConversationDetailOut(detail).data)

    @operation(
        summary="Change a conversation's title and/or settings",
        description="`settings` replaces the overrides object as a whole; an unknown key or a wrong "
        "type is a 400 and changes nothing. The next render uses them (its `cache.reason` is "
        "`settings_changed` when the effective settings differ from the previous render's).",
        request=ConversationPatchIn,
        responses={200: ConversationDetailOut},
        errors=(400, 401, 404),
        operation_id="conversations_partial_update",
    )
    @transaction.atomic(durable=True)
    def patch(self, request: Request, conv: str) -> Response:
        data = validated_body(ConversationPatchIn, request)
        conversation = conversation_update(
            conversation=self.conversation(request, conv),
            title=data.get("title"),
            settings=data.get("settings"),
        )
        return Response(ConversationDetailOut(conversation_detail(conversation)).data)

    @operation(
        summary="Erase a conversation and everything it owns (blocks, binaries, summaries, sources, "
        "contexts, render history)",
        responses={204: None},
        errors=(401, 404),
        operation_id="conversations_destroy",
    )
    @transaction.atomic(durable=True)
    def delete(self, request: Request, conv: str) -> Response:
        conversation_delete(conversation=self.conversation(request, conv))
        return Response(status=status.HTTP_204_NO_CONTENT)
