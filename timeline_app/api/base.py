"""What every API view shares: the caller's tenant, its conversation and context, input parsing."""

from __future__ import annotations

from contextvars import Token
from typing import Any, ClassVar, cast

from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.views import APIView

from timeline_app import selectors
from timeline_app.api.auth import ApiClient
from timeline_app.api.schema import ApiSchema
from timeline_app.errors import InvalidInput
from timeline_app.models import Conversation, Tenant, Timeline
from timeline_app.services.conversations import timeline_get_or_create
from timeline_app.services.operations import actor_reset, actor_set


def validated_body(serializer_class: type[serializers.Serializer[Any]], request: Request) -> dict[str, Any]:
    """The request body, checked by ``serializer_class``: a 400 in the one error shape otherwise."""
    if not isinstance(request.data, dict):
        raise InvalidInput("the request body must be a JSON object")
    serializer = serializer_class(data=request.data)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


def validated_query(serializer_class: type[serializers.Serializer[Any]], request: Request) -> dict[str, Any]:
    serializer = serializer_class(data=request.query_params)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


SMALL_BODY_BYTES = 1024 * 1024
"""What a control endpoint reads of a body at most (compact, hide, unhide, a conversation's or a
context's fields): none of them accepts more than a few kilobytes."""
USAGE_BODY_BYTES = 64 * 1024
"""What a usage report reads at most: an SDK usage object is well under 2 KB."""


class TenantView(APIView):
    """Everything is scoped to the API key's tenant: another tenant's conversation is a 404.

    ``max_body_bytes``: the most this view reads of a request body (``api.parsers.body_limit``;
    None: ``TIMELINE_MAX_REQUEST_BYTES``); a bigger one is a 413 before it is read."""

    schema = ApiSchema()
    max_body_bytes: ClassVar[int | None] = None

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)  # authenticated: the operations log's actor is the key
        self._actor = actor_set(f"key:{cast(ApiClient, request.user).key.prefix}")

    def dispatch(self, request: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().dispatch(request, *args, **kwargs)
        finally:  # after a 500 too (DRF re-raises it past finalize_response)
            token: Token[str] | None = self.__dict__.pop("_actor", None)
            if token is not None:
                actor_reset(token)

    def tenant(self, request: Request) -> Tenant:
        return cast(ApiClient, request.user).tenant

    def conversation(self, request: Request, conv: str) -> Conversation:
        return selectors.conversation_get(tenant=self.tenant(request), public_id=conv)

    def timeline(self, request: Request, conv: str, context: str = Timeline.DEFAULT_NAME) -> Timeline:
        """The context with its conversation in one query; the 404 says which one is missing."""
        timeline = selectors.timeline_of(tenant=self.tenant(request), public_id=conv, name=context)
        if timeline is not None:
            return timeline
        return selectors.timeline_require(conversation=self.conversation(request, conv), name=context)

    def timeline_for_write(
        self, request: Request, conv: str, context: str = Timeline.DEFAULT_NAME
    ) -> Timeline:
        """Writes create a named context on first use (seed 004)."""
        timeline = selectors.timeline_of(tenant=self.tenant(request), public_id=conv, name=context)
        if timeline is not None:
            return timeline
        return timeline_get_or_create(conversation=self.conversation(request, conv), name=context)
