"""The conversation pages' two calls into the services: the render preview and the
queued manual compaction (the page and the list action), each failure shown as a message instead
of a 500."""

from __future__ import annotations

import logging

from django.contrib import messages
from django.contrib.admin.utils import quote
from django.urls import reverse
from django.utils.html import format_html

from timeline_app.errors import DomainError
from timeline_app.models import Compaction, Timeline
from timeline_app.rendering.pipeline import RenderOptions
from timeline_app.rendering.request_head import request_head
from timeline_app.services.compaction import compaction_request, compaction_revert
from timeline_app.services.render import RenderOutcome, timeline_render_preview

logger = logging.getLogger(__name__)

# A queued compaction's message level by the row's status (with eager tasks, the embedded mode,
# the task has run already and the row has its outcome).
COMPACT_LEVELS = {
    Compaction.Status.QUEUED: messages.SUCCESS,
    Compaction.Status.RUNNING: messages.SUCCESS,
    Compaction.Status.APPLIED: messages.SUCCESS,
    Compaction.Status.SKIPPED: messages.WARNING,
    Compaction.Status.REJECTED: messages.WARNING,
    Compaction.Status.FAILED: messages.ERROR,
}


def dry_render(
    timeline: Timeline, *, include_sources: bool, include_announce: bool, force: bool, system_tokens: int
) -> tuple[RenderOutcome | None, str | None]:
    """The render preview (``timeline_render_preview``: nothing persisted); a failure is shown on
    the page instead of a 500."""
    try:
        outcome = timeline_render_preview(
            timeline=timeline,
            options=RenderOptions(
                format="text", include_sources=include_sources, include_announce=include_announce
            ),
            head=request_head(system_tokens=system_tokens),  # the head of a request without its text
            force=force,
        )
    except Exception as exc:
        logger.exception("render preview of timeline %s failed", timeline.pk)
        return None, f"{type(exc).__name__}: {exc}"
    return outcome, None


def compact(timeline: Timeline) -> tuple[int, str]:
    """Queue a forced manual compaction as ``POST …/compact/`` does (``compaction_request``: a
    ``queued`` row the worker finishes, or the one already queued or running); returns a message
    level and text naming that compaction. The summarizer never runs in the admin's request."""
    try:
        row = compaction_request(timeline=timeline, force=True)
    except Exception as exc:
        logger.exception("manual compaction of timeline %s could not be queued", timeline.pk)
        return messages.ERROR, f"Compaction of “{timeline.name}” not queued: {type(exc).__name__}: {exc}"
    url = reverse("admin:timeline_app_compaction_change", args=[quote(row.pk)])
    text = format_html(
        'Compaction <a href="{}">{}</a> of “{}”: {}{}.',
        url,
        row.public_id,
        timeline.name,
        row.status,
        f" ({row.error})" if row.error else "",
    )
    return COMPACT_LEVELS.get(Compaction.Status(row.status), messages.INFO), text


def revert(timeline: Timeline, *, public_id: str, actor: str) -> tuple[int, str]:
    """Revert the context's compaction ``public_id`` as ``POST …/compactions/{id}/revert/`` does
    (only the newest applied one); a refusal (409, 404) is the message, not a 500."""
    try:
        row = compaction_revert(timeline=timeline, public_id=public_id, actor=actor)
    except DomainError as exc:
        return messages.ERROR, f"Compaction {public_id} of “{timeline.name}” not reverted: {exc.message}"
    url = reverse("admin:timeline_app_compaction_change", args=[quote(row.pk)])
    text = format_html(
        'Compaction <a href="{}">{}</a> of “{}” reverted: the context renders as before it.',
        url,
        row.public_id,
        timeline.name,
    )
    return messages.SUCCESS, text
