"""Compactions: a summary block and the row that says what it covers; nothing is deleted."""

from __future__ import annotations

import secrets
from typing import Any

from django.db import models
from django.db.models import Q

from timeline_app.models.blocks import Block
from timeline_app.models.owned import OwnedModel, OwnedQuerySet, owner_key
from timeline_app.models.tenants import Conversation, Tenant


class CompactionQuerySet(OwnedQuerySet["Compaction"]):
    def applied(self) -> CompactionQuerySet:
        return self.filter(status=Compaction.Status.APPLIED)

    def latest_applied(self, *, timeline: Any) -> Compaction | None:
        """The compaction that defines the timeline's visible window (its summary loaded too).

        ``timeline``: a ``Timeline`` (typed ``Any``: ``timelines`` imports this module, not the
        other way round)."""
        return (
            self.applied().filter(timeline=timeline).select_related("summary_block").order_by("-id").first()
        )


class CompactionTrigger(models.TextChoices):
    RENDER = "render"
    FORCED = "forced"
    BACKGROUND = "background"
    MANUAL = "manual"


class CompactionStatus(models.TextChoices):
    """A compaction row's state: ``queued`` (asked for by ``POST …/compact/``, its task not started
    yet), ``running`` (the claim); the others are final."""

    QUEUED = "queued"
    RUNNING = "running"
    APPLIED = "applied"
    REJECTED = "rejected"
    SKIPPED = "skipped"
    FAILED = "failed"
    # Applied, then taken back (``POST …/compactions/{id}/revert/``): out of the window, kept.
    REVERTED = "reverted"


class CompactionOutcomeStatus(models.TextChoices):
    """What a compaction run answers. ``busy`` (another run holds the claim) is never stored."""

    APPLIED = CompactionStatus.APPLIED.value
    REJECTED = CompactionStatus.REJECTED.value
    SKIPPED = CompactionStatus.SKIPPED.value
    FAILED = CompactionStatus.FAILED.value
    BUSY = "busy"


def new_compaction_id() -> str:
    """A compaction's public id: ``cmp_`` and 16 hex digits (the integer key stays inside)."""
    return f"cmp_{secrets.token_hex(8)}"


class Compaction(OwnedModel):
    Trigger = CompactionTrigger
    Status = CompactionStatus
    Outcome = CompactionOutcomeStatus

    timeline = models.ForeignKey(
        "timeline_app.Timeline", on_delete=models.CASCADE, related_name="compactions"
    )
    tenant = owner_key(Tenant)
    conversation = owner_key(Conversation)
    # Set on every new row; nullable in the database only so that adding it did not rewrite the
    # table (migration 0009 filled in the rows it found).
    public_id = models.CharField(max_length=32, null=True, blank=True, default=new_compaction_id)
    # One compaction per summary block (``timeline_cmp_summary_conv_uniq``, which leads with this
    # column and serves its lookups: no index of its own). A foreign key rather than a one-to-one
    # field since migration 0017: a one-to-one field's unique constraint cannot include the shard key.
    summary_block = models.ForeignKey(
        Block, null=True, blank=True, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    trigger = models.CharField(max_length=16, choices=Trigger.choices)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.RUNNING)
    first_retained_seq = models.BigIntegerField(null=True, blank=True)
    covered_from_seq = models.BigIntegerField(null=True, blank=True)
    covered_to_seq = models.BigIntegerField(null=True, blank=True)
    covered_turn_ids = models.JSONField(default=list, blank=True)
    split_turn_id = models.CharField(max_length=128, blank=True)
    digest = models.JSONField(default=dict, blank=True)
    before_tokens = models.IntegerField(default=0)
    after_tokens = models.IntegerField(default=0)
    compacted_tokens = models.IntegerField(default=0)
    # The tokens above which the context compacts (``threshold × max_tokens``) when this attempt
    # planned: with before and after, the numbers that decided a rejection or a skip (migration 0019).
    threshold_tokens = models.IntegerField(null=True, blank=True)
    summarizer = models.CharField(max_length=32, blank=True)
    model = models.CharField(max_length=100, blank=True)
    error = models.TextField(blank=True)
    duration_ms = models.IntegerField(default=0)
    summarize_ms = models.IntegerField(default=0)
    # The summary call's own usage (the provider's usage object), its cost in dollars (price
    # table), and whether it read the context's cached prefix ("warm") or sent the transcript.
    summary_usage = models.JSONField(default=dict, blank=True)
    summary_cost_usd = models.DecimalField(max_digits=24, decimal_places=12, null=True, blank=True)
    summary_cache = models.CharField(max_length=8, blank=True)
    # The Celery task that holds this claim (empty for renders and synchronous calls): a redelivery
    # of the same task (its worker died mid-run) takes the claim over instead of waiting for it.
    task_id = models.CharField(max_length=255, blank=True)
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    # A reverted compaction: when, and who (an API key's prefix or a staff user's name).
    reverted_at = models.DateTimeField(null=True, blank=True)
    reverted_by = models.CharField(max_length=150, blank=True)

    objects = CompactionQuerySet.as_manager()

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=CompactionStatus.values),
                name="timeline_compaction_status_valid",
            ),
            models.CheckConstraint(
                condition=Q(trigger__in=CompactionTrigger.values),
                name="timeline_compaction_trigger_valid",
            ),
            # Unique constraints end with the conversation, the shard key (docs/scaling.md
            # "Unique constraints and the shard key"; migration 0017).
            # At most one compaction in flight per timeline: the claim of DESIGN §6.
            models.UniqueConstraint(
                fields=["timeline", "conversation"],
                condition=Q(status=CompactionStatus.RUNNING),
                name="timeline_cmp_running_conv_uniq",
            ),
            # GET …/compactions/{id}: a context's compaction by its public id.
            models.UniqueConstraint(
                fields=["timeline", "public_id", "conversation"], name="timeline_cmp_public_id_conv_uniq"
            ),
            models.UniqueConstraint(
                fields=["summary_block", "conversation"], name="timeline_cmp_summary_conv_uniq"
            ),
        ]
        indexes = [
            # The admin's search: a conversation by one of its compactions' public ids.
            models.Index(fields=["public_id"], name="timeline_cmp_public_id_idx"),
            # The latest applied compaction of a timeline: the visible window's start.
            models.Index(
                fields=["timeline", "-id"],
                condition=Q(status=CompactionStatus.APPLIED),
                name="timeline_cmp_applied_idx",
            ),
        ]

    def __str__(self) -> str:
        return f"compaction {self.pk} ({self.status})"
