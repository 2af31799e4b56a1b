"""Stored blocks: append-only, never rewritten except for their hide state (DESIGN §3)."""

from __future__ import annotations

import base64
from typing import Any

from django.db import models
from django.db.models import Case, F, IntegerField, Q, Sum, When

from timeline_app.domain import blocks as b
from timeline_app.domain.blocks import Block as BlockValue
from timeline_app.domain.messages import MESSAGE_BLOCK_TYPES, POPPED_REASON
from timeline_app.models.owned import OwnedModel, OwnedQuerySet, owner_key
from timeline_app.models.tenants import Conversation, Tenant

INDEXED_TYPES = tuple(sorted({b.TURN_HEADER, b.PLAN, b.SUMMARY, *MESSAGE_BLOCK_TYPES}))
"""The block types the (timeline, type, seq) index holds: the types a query looks up by type."""


def effective_tokens(prefix: str = "") -> Case:
    """What a stored block costs in a render: its replacement text's tokens once hidden (the
    database side of ``domain.blocks.Block.effective_tokens``). ``prefix`` reaches the block
    through a relation (``"summary_block__"``)."""
    return Case(
        When(**{f"{prefix}hidden": True}, then=F(f"{prefix}replacement_tokens")),
        default=F(f"{prefix}tokens"),
        output_field=IntegerField(),
    )


VALUE_FIELDS = (
    "seq",
    "type",
    "turn_id",
    "author",
    "ts",
    "mime",
    "text",
    "data",
    "path",
    "meta",
    "hidden",
    "replacement_text",
    "hidden_reason",
    "tokens",
    "replacement_tokens",
)
"""The columns of a block the pure core reads, in ``domain.blocks.Block``'s field order."""


def block_value(*columns: Any) -> BlockValue:
    """A pure ``Block`` from a row's ``VALUE_FIELDS`` (the binary payload as base64 text)."""
    raw = columns[_DATA]
    if not raw:
        return BlockValue.from_columns((*columns[:_DATA], "", *columns[_DATA + 1 :]))
    data = base64.b64encode(bytes(raw)).decode()
    return BlockValue.from_columns((*columns[:_DATA], data, *columns[_DATA + 1 :]))


_DATA = VALUE_FIELDS.index("data")


class BlockQuerySet(OwnedQuerySet["Block"]):
    def window(self, *, timeline: Any, start: Any) -> BlockQuerySet:
        """The stored blocks of a visible window starting at ``start`` (summaries come separately;
        popped messages are in no window).

        ``timeline`` and ``start`` are a row and a seq, or ``OuterRef``s inside a subquery."""
        return self.filter(timeline=timeline, seq__gte=start).exclude(type=b.SUMMARY).not_popped()

    def not_popped(self) -> BlockQuerySet:
        """Without the blocks of popped messages (``POST …/messages/pop/``)."""
        return self.exclude(hidden_reason=POPPED_REASON)

    def effective_tokens(self) -> int:
        """Sum of what these blocks cost in a render (hidden ones at their replacement)."""
        return int(self.order_by().aggregate(total=Sum(effective_tokens()))["total"] or 0)

    def as_values(self) -> list[BlockValue]:
        """These blocks as pure values, read as plain columns (no model instances: a render's
        window can hold tens of thousands of blocks)."""
        return [block_value(*row) for row in self.values_list(*VALUE_FIELDS)]


class Block(OwnedModel):
    # No index of its own: the (timeline, seq, conversation) unique constraint leads with it.
    timeline = models.ForeignKey(
        "timeline_app.Timeline", on_delete=models.CASCADE, related_name="blocks", db_index=False
    )
    tenant = owner_key(Tenant)
    conversation = owner_key(Conversation)
    seq = models.BigIntegerField()
    turn_id = models.CharField(max_length=128, blank=True)
    type = models.CharField(max_length=64)
    author = models.CharField(max_length=64, blank=True)
    ts = models.CharField(max_length=40, blank=True, help_text="ISO-8601 time as the client gave it")
    mime = models.CharField(max_length=128, blank=True)
    text = models.TextField(blank=True)
    data = models.BinaryField(null=True, blank=True)
    path = models.CharField(max_length=1024, blank=True)
    meta = models.JSONField(default=dict, blank=True)
    hidden = models.BooleanField(default=False)
    replacement_text = models.TextField(blank=True)
    hidden_reason = models.CharField(max_length=32, blank=True)
    tokens = models.IntegerField(default=0)
    replacement_tokens = models.IntegerField(default=0)
    client_id = models.CharField(max_length=128, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = BlockQuerySet.as_manager()

    class Meta:
        # Every unique constraint ends with the conversation, the shard key (docs/scaling.md
        # "Unique constraints and the shard key"; migration 0017): the same rule, since a timeline
        # has one conversation, and the index still serves every lookup by its leading columns.
        constraints = [
            models.UniqueConstraint(
                fields=["timeline", "seq", "conversation"], name="timeline_block_seq_conv_uniq"
            ),
            models.UniqueConstraint(
                fields=["timeline", "client_id", "conversation"],
                condition=Q(client_id__isnull=False),
                name="timeline_block_client_conv_uniq",
            ),
        ]
        indexes = [
            # Read back by path (react.read) and the admin's path search.
            models.Index(fields=["timeline", "path"], name="timeline_block_path_idx"),
            # Latest block of a type (the latest turn header, the active plan) and a named context's
            # messages: only the types these queries name are indexed (migration 0009).
            models.Index(
                fields=["timeline", "type", "seq"],
                condition=Q(type__in=INDEXED_TYPES),
                name="timeline_block_type_seq_idx",
            ),
            # Turn browsing in the admin; without seq, so a turn's entries share one key (B-tree
            # deduplication keeps the index a fraction of one with a unique key per block).
            models.Index(fields=["timeline", "turn_id"], name="timeline_block_turn_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.type}#{self.seq}"

    @property
    def effective_tokens(self) -> int:
        return self.replacement_tokens if self.hidden else self.tokens

    def to_value(self) -> BlockValue:
        return block_value(*(getattr(self, name) for name in VALUE_FIELDS))
