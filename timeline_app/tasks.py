"""Celery tasks: thin, ids in, the service does the work (docs/background.md).

``compact_timeline`` is acknowledged late: a worker that dies mid-run leaves the task unacked, the
broker redelivers it (Redis: after the visibility timeout) and the redelivered run, carrying the
same task id, takes over the dead run's claim. Running it twice, or alongside another compaction
of the same timeline, is harmless: the second run finds nothing to do (``skipped``) or the claim
taken (``busy``).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from celery import Task, shared_task
from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.utils import timezone

from timeline_app import selectors, tenancy
from timeline_app.domain.operations import SYSTEM
from timeline_app.models import Compaction
from timeline_app.services.compaction import compaction_sweep, timeline_compact
from timeline_app.services.conversations import conversations_expire
from timeline_app.services.operations import acting_as
from timeline_app.services.render_history import render_history_trim


@shared_task(
    # Names kept from before the move to timeline_app: messages queued by an older release and the
    # beat schedule still address them.
    name="compaction.tasks.compact_timeline",
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    ignore_result=False,
    # The database went away for a moment: try again later (same task id, so it can take its
    # claim over if the failed attempt could not release it).
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=True,
    retry_jitter=True,
    max_retries=3,
)
def compact_timeline(
    self: Task,
    timeline_id: int,
    trigger: str = Compaction.Trigger.BACKGROUND,
    force: bool = False,
    compaction_id: int | None = None,
) -> dict[str, Any]:
    """Compact one timeline (``trigger``: background from the sweep, manual from the API, which
    passes the ``queued`` compaction row this run finishes). Runs as the timeline's tenant
    (row-level security): the one widened read is which tenant that is."""
    with tenancy.tenant_scope_all():
        tenant_id = selectors.timeline_tenant_id(timeline_id=timeline_id)
    with tenancy.tenant_scope(tenant_id), acting_as(SYSTEM):  # the worker's, even run eagerly
        outcome = timeline_compact(
            timeline_id=timeline_id,
            trigger=trigger,
            force=force,
            task_id=self.request.id or "",
            compaction_id=compaction_id,
        )
    return {**outcome.as_dict(), "compaction_id": outcome.compaction_id}


@shared_task(name="compaction.tasks.sweep_compactions", ignore_result=True)
def sweep_compactions(active_within_seconds: int = 3600) -> int:
    """The beat job: enqueue ``compact_timeline`` for every recently active timeline whose visible
    tokens passed ``TIMELINE_SOFT_THRESHOLD × max_tokens``. Returns how many were enqueued.
    A trusted path: it reads every tenant's timelines."""
    with tenancy.tenant_scope_all():
        due = compaction_sweep(
            now=timezone.now(),
            active_within=timedelta(seconds=active_within_seconds),
            soft_threshold=settings.TIMELINE_SOFT_THRESHOLD,
            expires=settings.TIMELINE_SWEEP_INTERVAL_SECONDS * 5,
        )
    return len(due)


@shared_task(name="timeline_app.tasks.trim_render_history", ignore_result=True)
def trim_render_history() -> int:
    """The beat job: keep the render history within its configured count and age (every
    tenant's: a trusted path)."""
    with tenancy.tenant_scope_all():
        return render_history_trim(
            now=timezone.now(),
            keep=settings.TIMELINE_RENDER_HISTORY_MAX,
            days=settings.TIMELINE_RENDER_HISTORY_DAYS,
        )


@shared_task(name="timeline_app.tasks.expire_idle_conversations", ignore_result=True)
def expire_idle_conversations() -> int:
    """The retention beat job: erase conversations idle past ``TIMELINE_RETENTION_IDLE_DAYS``
    (off when 0), at most ``TIMELINE_RETENTION_BATCH`` per run."""
    if settings.TIMELINE_RETENTION_IDLE_DAYS <= 0:
        return 0
    with tenancy.tenant_scope_all():  # a trusted path: every tenant's idle conversations
        return conversations_expire(
            now=timezone.now(),
            idle_days=settings.TIMELINE_RETENTION_IDLE_DAYS,
            batch=settings.TIMELINE_RETENTION_BATCH,
        )
