"""Cursor pagination of the conversation list: ``{results, next}``, newest first.

DRF's ``CursorPagination`` over the unique, indexed, immutable ``-id`` ordering (index
``timeline_conv_tenant_id_idx``). The cursor stays what the contract has always shown: the plain id
of the last conversation of the page, and ``next`` repeats the page size
(``…/conversations/?cursor=<id>&limit=<n>``). A malformed or out-of-range ``cursor`` or ``limit`` is a
400, not a silent default.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from rest_framework.pagination import Cursor, CursorPagination
from rest_framework.request import Request
from rest_framework.response import Response

from timeline_app.errors import InvalidInput

MAX_ID = 2**63 - 1


def _integer(request: Request, name: str) -> int | None:
    raw = request.query_params.get(name)
    if raw is None:
        return None
    try:
        return int(raw)
    except ValueError as exc:
        raise InvalidInput("cursor and limit must be integers", details={name: raw[:50]}) from exc


class ConversationCursorPagination(CursorPagination):
    ordering = "-id"
    page_size = 50
    max_page_size = 200
    cursor_query_param = "cursor"
    page_size_query_param = "limit"

    def get_page_size(self, request: Request) -> int:
        limit = _integer(request, "limit")
        if limit is None:
            return self.page_size
        if not 1 <= limit <= self.max_page_size:
            raise InvalidInput(f"limit must be between 1 and {self.max_page_size}", details={"limit": limit})
        return limit

    def decode_cursor(self, request: Request) -> Cursor | None:
        if not request.query_params.get(self.cursor_query_param):
            return None
        position = _integer(request, self.cursor_query_param)
        if position is None or not 1 <= position <= MAX_ID:
            raise InvalidInput(f"cursor must be between 1 and {MAX_ID}", details={"cursor": position})
        return Cursor(offset=0, reverse=False, position=position)

    def encode_cursor(self, cursor: Cursor) -> str:
        # Positions are unique ids, so a forward cursor never needs an offset.
        query = urlencode(
            {self.cursor_query_param: cursor.position, self.page_size_query_param: self.page_size}
        )
        request: Request = self.request  # type: ignore[attr-defined]  # set by paginate_queryset
        return request.build_absolute_uri(f"{request.path}?{query}")

    def get_paginated_response(self, data: Any) -> Response:
        return Response({"results": data, "next": self.get_next_link()})

    def get_paginated_response_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        return {
            "type": "object",
            "required": ["results", "next"],
            "properties": {
                "results": schema,
                "next": {
                    "type": "string",
                    "format": "uri",
                    "nullable": True,
                    "description": "the next page, or null on the last one",
                },
            },
        }

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        return [
            {
                "name": self.cursor_query_param,
                "in": "query",
                "required": False,
                "description": "`cursor` of the previous page's `next`: the last id it showed",
                "schema": {"type": "integer", "minimum": 1, "maximum": MAX_ID},
            },
            {
                "name": self.page_size_query_param,
                "in": "query",
                "required": False,
                "description": f"page size, 1–{self.max_page_size}",
                "schema": {"type": "integer", "minimum": 1, "maximum": self.max_page_size, "default": 50},
            },
        ]
