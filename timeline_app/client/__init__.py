"""Python client for the timeline service (see README "Python client")."""

from timeline_app.client.http import TimelineAPIError, Transport

__all__ = ["TimelineAPIError", "Transport"]
