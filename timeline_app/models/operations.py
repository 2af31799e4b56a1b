"""The operations log of a context (issue 35): one row per operation that changed what the model
sees (``domain.operations.KINDS``), written in the transaction of the change it records and
bounded per context by ``TIMELINE_OPERATIONS_LOG_MAX`` (``services.operations``)."""

from __future__ import annotations

import secrets

from django.db import models
from django.db.models import Q

from timeline_app.domain.operations import KINDS
from timeline_app.models.owned import OwnedModel, OwnedQuerySet, owner_key
from timeline_app.models.tenants import Conversation, Tenant
from timeline_app.models.timelines import Timeline


def new_operation_id() -> str:
    """An operation's public id: ``op_`` and 16 hex digits."""
    return f"op_{secrets.token_hex(8)}"


class OperationQuerySet(OwnedQuerySet["Operation"]):
    pass


class Operation(OwnedModel):
    timeline = models.ForeignKey(Timeline, on_delete=models.CASCADE, related_name="operations")
    tenant = owner_key(Tenant)
    conversation = owner_key(Conversation)
    public_id = models.CharField(max_length=32, default=new_operation_id)
    at = models.DateTimeField()
    kind = models.CharField(max_length=32, choices=[(k, k) for k in KINDS])
    # An API key's prefix (``key:…``), a staff user (``staff:…``) or ``system``.
    actor = models.CharField(max_length=150)
    tokens_before = models.BigIntegerField(null=True, blank=True)
    tokens_after = models.BigIntegerField(null=True, blank=True)
    # The seqs it affected as ``[[first, last], …]`` and the paths (``domain.operations``).
    seq_ranges = models.JSONField(default=list, blank=True)
    paths = models.JSONField(default=list, blank=True)
    # The compaction's public id (``cmp_…``), model and summary cost, for compaction operations.
    compaction_id = models.CharField(max_length=32, blank=True)
    model = models.CharField(max_length=100, blank=True)
    cost_usd = models.DecimalField(max_digits=24, decimal_places=12, null=True, blank=True)
    details = models.JSONField(default=dict, blank=True)

    objects = OperationQuerySet.as_manager()

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(kind__in=list(KINDS)), name="timeline_operation_kind_valid"),
            # GET …/operations/?cursor=op_…: an entry of a context by its public id (ends with the
            # conversation, the shard key: docs/scaling.md).
            models.UniqueConstraint(
                fields=["timeline", "public_id", "conversation"], name="timeline_op_public_id_conv_uniq"
            ),
        ]
        indexes = [
            # The log of a context newest first (the API, the admin page) and its trim at write time.
            models.Index(fields=["timeline", "-id"], name="timeline_op_recent_idx"),
        ]

    def __str__(self) -> str:
        return f"operation {self.pk} ({self.kind})"
