"""Python client for the timeline service (see README "Python client")."""

from timeline_client.contexts import (
    Context,
    Message,
    get_context,
    get_full_context,
    list_contexts,
    new_context,
)
from timeline_client.http import TimelineAPIError, Transport
from timeline_client.native import NativeRequest
from timeline_client.timelines import TimelineClient, attachment, is_context_limit_error
from timeline_client.tool_names import provider_tool_name, timeline_tool_name

__all__ = [
    "Context",
    "Message",
    "NativeRequest",
    "TimelineAPIError",
    "TimelineClient",
    "Transport",
    "attachment",
    "get_context",
    "get_full_context",
    "is_context_limit_error",
    "list_contexts",
    "new_context",
    "provider_tool_name",
    "timeline_tool_name",
]
