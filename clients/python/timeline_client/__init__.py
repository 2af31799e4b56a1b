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
from timeline_client.timelines import TimelineClient, attachment, is_context_limit_error

__all__ = [
    "Context",
    "Message",
    "TimelineAPIError",
    "TimelineClient",
    "Transport",
    "attachment",
    "get_context",
    "get_full_context",
    "is_context_limit_error",
    "list_contexts",
    "new_context",
]
