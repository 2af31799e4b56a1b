"""Python client for the timeline service (see README "Python client")."""

from timeline_app.client.http import TimelineAPIError, Transport
from timeline_app.client.timelines import TimelineClient, attachment, is_context_limit_error

__all__ = ["TimelineAPIError", "TimelineClient", "Transport", "attachment", "is_context_limit_error"]
