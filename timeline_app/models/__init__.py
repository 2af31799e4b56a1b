"""Relational, append-only storage (DESIGN §3).

A stored block is never rewritten except for its hide state; compaction adds a summary block and
a ``Compaction`` row and deletes nothing. Order inside a timeline is ``Block.seq``.

One module per concept; every public name is re-exported here (``from timeline_app.models import
Block``).
"""

from typing import TYPE_CHECKING

from timeline_app.models.blocks import (
    INDEXED_TYPES,
    VALUE_FIELDS,
    Block,
    BlockQuerySet,
    block_value,
    effective_tokens,
)
from timeline_app.models.compactions import (
    Compaction,
    CompactionOutcomeStatus,
    CompactionQuerySet,
    CompactionStatus,
    CompactionTrigger,
    new_compaction_id,
)
from timeline_app.models.operations import Operation, OperationQuerySet, new_operation_id
from timeline_app.models.owned import OwnedModel, OwnedQuerySet, fill_owners
from timeline_app.models.renders import RenderRecord, RenderRecordQuerySet, RenderUsage
from timeline_app.models.sources import Source, SourceQuerySet
from timeline_app.models.tenants import ApiKey, Conversation, Tenant
from timeline_app.models.timelines import Timeline, TimelineQuerySet, WindowAnnotations, block_count_of

if TYPE_CHECKING:
    from timeline_app.models.timelines import WindowedTimeline as WindowedTimeline

__all__ = [
    "INDEXED_TYPES",
    "VALUE_FIELDS",
    "ApiKey",
    "Block",
    "BlockQuerySet",
    "Compaction",
    "CompactionOutcomeStatus",
    "CompactionQuerySet",
    "CompactionStatus",
    "CompactionTrigger",
    "Conversation",
    "Operation",
    "OperationQuerySet",
    "OwnedModel",
    "OwnedQuerySet",
    "RenderRecord",
    "RenderRecordQuerySet",
    "RenderUsage",
    "Source",
    "SourceQuerySet",
    "Tenant",
    "Timeline",
    "TimelineQuerySet",
    "WindowAnnotations",
    "block_count_of",
    "block_value",
    "effective_tokens",
    "fill_owners",
    "new_compaction_id",
    "new_operation_id",
]
