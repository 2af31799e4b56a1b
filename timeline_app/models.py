"""Relational, append-only storage (DESIGN §3).

A stored block is never rewritten except for its hide state; compaction adds a summary block and
a ``Compaction`` row and deletes nothing. Order inside a timeline is ``Block.seq``.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar

from django.conf import settings
from django.db import models
from django.db.models import Case, Count, F, IntegerField, OuterRef, Q, Subquery, Sum, Value, When
from django.db.models.functions import Coalesce, Greatest

from timeline_app.domain import blocks as b
from timeline_app.domain.blocks import Block as BlockValue
from timeline_app.domain.messages import MESSAGE_BLOCK_TYPES, POPPED_REASON
from timeline_app.rendering.prefix import CACHE_REASONS

INDEXED_TYPES = tuple(sorted({b.TURN_HEADER, b.PLAN, b.SUMMARY, *MESSAGE_BLOCK_TYPES}))
"""The block types the (timeline, type, seq) index holds: the types a query looks up by type."""


def effective_tokens(prefix: str = "") -> Case:
    """What a stored block costs in a render: its replacement text's tokens once hidden (the
    database side of ``rendering.blocks.Block.effective_tokens``). ``prefix`` reaches the block
    through a relation (``"summary_block__"``)."""
    return Case(
        When(**{f"{prefix}hidden": True}, then=F(f"{prefix}replacement_tokens")),
        default=F(f"{prefix}tokens"),
        output_field=IntegerField(),
    )


class Tenant(models.Model):
    name = models.CharField(max_length=100, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # Staff users limited to the tenants they are listed on in the admin (a staff user on no
    # tenant's list sees every tenant; superusers always do): docs/admin.md "Tenant scope".
    staff_users = models.ManyToManyField(
        settings.AUTH_USER_MODEL,
        blank=True,
        related_name="admin_tenants",
        help_text="Staff users who see only the tenants they are listed on in the admin "
        "(a staff user listed on none sees every tenant).",
    )

    def __str__(self) -> str:
        return self.name


class ApiKey(models.Model):
    """A tenant's API key. Only the SHA-256 of the key is stored; the key is shown once."""

    PREFIX_LENGTH = 12

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="api_keys")
    name = models.CharField(max_length=100, blank=True)
    prefix = models.CharField(max_length=PREFIX_LENGTH)
    key_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.prefix}…"

    @staticmethod
    def hash_key(raw: str) -> str:
        return hashlib.sha256(raw.encode()).hexdigest()

    @staticmethod
    def generate_raw_key() -> str:
        return "tlk_" + secrets.token_urlsafe(32)


class Conversation(models.Model):
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="conversations")
    public_id = models.CharField(max_length=64)
    title = models.CharField(max_length=500, blank=True)
    started_at = models.DateTimeField()
    settings = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_activity_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "public_id"], name="timeline_conv_public_id_uniq"),
        ]
        indexes = [
            # The tenant's conversation list, newest first (cursor pagination on id).
            models.Index(fields=["tenant", "-id"], name="timeline_conv_tenant_id_idx"),
            # The admin's "active in the last hour/day/week" filter and its activity ordering.
            models.Index(fields=["-last_activity_at"], name="timeline_conv_activity_idx"),
        ]

    def __str__(self) -> str:
        return self.public_id


def _owner_key(model: Any, *, related_name: str = "+") -> Any:
    """A denormalised owner key (issue 26): the tenant or the conversation a row belongs to, set on
    insert from its parent and never changed. No foreign-key constraint and no index of its own:
    the parent's key already guarantees both, and every query names the timeline first; it is the
    row-level security key (``tenancy``) and the sharding key (docs/scaling.md)."""
    return models.ForeignKey(
        model,
        on_delete=models.CASCADE,
        related_name=related_name,
        db_constraint=False,
        db_index=False,
        editable=False,
    )


def fill_owners(rows: list[Any]) -> None:
    """Give rows below a timeline (or timelines below a conversation) their tenant and
    conversation before they are inserted, from the parent instance they were built with, or with
    one query for the parents that were given by id only."""
    missing: dict[int, list[Any]] = {}
    for row in rows:
        if row.tenant_id is not None and (isinstance(row, Timeline) or row.conversation_id is not None):
            continue
        parent_field = "conversation" if isinstance(row, Timeline) else "timeline"
        parent = row._state.fields_cache.get(parent_field)
        if parent is not None and parent.__dict__.get("tenant_id") is not None:
            _set_owner(row, parent.tenant_id, getattr(parent, "conversation_id", parent.pk))
        else:
            missing.setdefault(getattr(row, f"{parent_field}_id"), []).append(row)
    if not missing:
        return
    parents: Any = (
        Conversation.objects.filter(pk__in=missing).values_list("pk", "tenant_id", "pk")
        if isinstance(next(iter(missing.values()))[0], Timeline)
        else Timeline.objects.filter(pk__in=missing).values_list("pk", "tenant_id", "conversation_id")
    )
    for pk, tenant_id, conversation_id in parents:
        for row in missing[pk]:
            _set_owner(row, tenant_id, conversation_id)


def _set_owner(row: Any, tenant_id: int, conversation_id: int) -> None:
    row.tenant_id = tenant_id
    if not isinstance(row, Timeline):
        row.conversation_id = conversation_id


_Owned = TypeVar("_Owned", bound=models.Model)


class OwnedQuerySet(models.QuerySet[_Owned]):
    """``bulk_create`` fills the owner keys (``fill_owners``) first: every insert path carries them."""

    def bulk_create(self, objs: Any, *args: Any, **kwargs: Any) -> list[_Owned]:
        rows = list(objs)
        fill_owners(rows)
        return super().bulk_create(rows, *args, **kwargs)


class OwnedModel(models.Model):
    """A row that carries its tenant (the row-level security key) and, below a conversation, its
    conversation (the sharding key), both set on insert."""

    class Meta:
        abstract = True

    def save(self, *args: Any, **kwargs: Any) -> None:
        # The one save() override: the owner keys are the parent's, copied as the row is inserted.
        if self._state.adding:
            fill_owners([self])
        super().save(*args, **kwargs)


class TimelineQuerySet(OwnedQuerySet["Timeline"]):
    def with_window(self) -> TimelineQuerySet:
        """Each timeline annotated with its visible window, in the same query (no N+1):

        * ``window_first_seq``: ``Timeline.window_start`` of the latest applied compaction
          (``max(view_start_seq, its first retained seq)``);
        * ``summary_seq``: that compaction's summary block when ``Timeline.shows_summary``, else
          ``NULL``;
        * ``visible_tokens``: what ``compaction.planner.visible_tokens`` sums over the window
          (``BlockQuerySet.window`` from ``window_first_seq``, plus the shown summary), every block
          at ``effective_tokens()``: the figure the compaction threshold is compared with.

        A render's ``tokens.visible`` can differ from ``visible_tokens`` in three ways, all decided
        at render time: the ``[TURN …] (continued)`` header a window that starts mid-turn shows
        (``compaction.planner.rendered_tokens``, a dozen tokens), the hides TTL pruning persists
        during that render, and a named context's strategy (``selectors.strategy_window``).
        """
        latest = Compaction.objects.applied().filter(timeline=OuterRef("pk")).order_by("-id")
        window_sum = Subquery(
            Block.objects.window(timeline=OuterRef("pk"), start=OuterRef("window_first_seq"))
            .order_by()
            .values("timeline")
            .annotate(total=Sum(effective_tokens()))
            .values("total")[:1],
            output_field=IntegerField(),
        )
        # The latest applied compaction's summary, only when it is inside the view.
        shown = Q(summary_block__seq__gte=OuterRef("view_start_seq"))
        summary = latest.annotate(
            shown_seq=Case(When(shown, then=F("summary_block__seq")), output_field=models.BigIntegerField()),
            shown_tokens=Case(
                When(shown, then=effective_tokens("summary_block__")),
                default=Value(0),
                output_field=IntegerField(),
            ),
        )
        return self.annotate(
            window_first_seq=Greatest(
                F("view_start_seq"),
                Coalesce(Subquery(latest.values("first_retained_seq")[:1]), Value(0)),
                output_field=IntegerField(),
            ),
            summary_seq=Subquery(summary.values("shown_seq")[:1]),
        ).annotate(
            visible_tokens=Coalesce(window_sum, 0)
            + Coalesce(Subquery(summary.values("shown_tokens")[:1], output_field=IntegerField()), 0)
        )

    def with_block_count(self) -> TimelineQuerySet:
        """Each timeline annotated with ``block_count``: its stored blocks, cleared, hidden,
        popped and summaries included (the one block count; ``next_seq - 1`` is not one: an
        import keeps its seqs, gaps included)."""
        return self.annotate(block_count=Coalesce(block_count_of(timeline=OuterRef("pk")), 0))


def block_count_of(**where: Any) -> Subquery:
    """``COUNT(*)`` of the blocks ``where`` selects (``timeline=…`` or ``timeline__conversation=…``,
    usually an ``OuterRef``), as a scalar subquery over the ``(timeline, seq)`` index."""
    group = next(iter(where))
    return Subquery(
        Block.objects.filter(**where).order_by().values(group).annotate(n=Count("pk")).values("n")[:1],
        output_field=IntegerField(),
    )


class Timeline(OwnedModel):
    """A named context of a conversation (``main`` by default): one ordered block stream.

    Its visible window is ``[latest summary] + blocks from window_start() on`` (DESIGN §3).
    """

    DEFAULT_NAME = "main"

    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="timelines")
    tenant = _owner_key(Tenant)
    name = models.CharField(max_length=64, default=DEFAULT_NAME)
    next_seq = models.BigIntegerField(default=1)
    # Blocks below this seq were cleared from the context's view (seed 004 ``clear()``); still stored.
    view_start_seq = models.BigIntegerField(default=0)
    cache_last_touch_at = models.DateTimeField(null=True, blank=True)
    version = models.BigIntegerField(default=0)
    compaction_strategy = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = TimelineQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["conversation", "name"], name="timeline_tl_conv_name_uniq"),
        ]

    def __str__(self) -> str:
        return self.name

    def window_start(self, compaction: Compaction | None) -> int:
        """The first seq of the visible window: after the last ``clear()`` and from the latest
        applied compaction's first retained block on."""
        retained = compaction.first_retained_seq if compaction is not None else None
        return max(self.view_start_seq, retained or 0)

    def shows_summary(self, compaction: Compaction | None) -> bool:
        """Whether that compaction's summary block is inside the view (not cleared away)."""
        summary = compaction.summary_block if compaction is not None else None
        return summary is not None and summary.seq >= self.view_start_seq


class WindowAnnotations(TypedDict):
    """What ``TimelineQuerySet.with_window()`` and ``with_block_count()`` add to a timeline row."""

    window_first_seq: int
    summary_seq: int | None
    visible_tokens: int
    block_count: int


if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations

    WindowedTimeline = WithAnnotations[Timeline, WindowAnnotations]
    """A timeline row read through ``with_window().with_block_count()``."""


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
"""The columns of a block the pure core reads, in ``rendering.blocks.Block``'s field order."""


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
    # No index of its own: the (timeline, seq) unique constraint leads with the timeline.
    timeline = models.ForeignKey(Timeline, on_delete=models.CASCADE, related_name="blocks", db_index=False)
    tenant = _owner_key(Tenant)
    conversation = _owner_key(Conversation)
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
        constraints = [
            models.UniqueConstraint(fields=["timeline", "seq"], name="timeline_block_seq_uniq"),
            models.UniqueConstraint(
                fields=["timeline", "client_id"],
                condition=Q(client_id__isnull=False),
                name="timeline_block_client_id_uniq",
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


class CompactionQuerySet(OwnedQuerySet["Compaction"]):
    def applied(self) -> CompactionQuerySet:
        return self.filter(status=Compaction.Status.APPLIED)

    def latest_applied(self, *, timeline: Timeline) -> Compaction | None:
        """The compaction that defines the timeline's visible window (its summary loaded too)."""
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

    timeline = models.ForeignKey(Timeline, on_delete=models.CASCADE, related_name="compactions")
    tenant = _owner_key(Tenant)
    conversation = _owner_key(Conversation)
    # Set on every new row; nullable in the database only so that adding it did not rewrite the
    # table (migration 0009 filled in the rows it found).
    public_id = models.CharField(max_length=32, null=True, blank=True, default=new_compaction_id)
    summary_block = models.OneToOneField(
        Block, null=True, blank=True, on_delete=models.CASCADE, related_name="compaction"
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
            # At most one compaction in flight per timeline: the claim of DESIGN §6.
            models.UniqueConstraint(
                fields=["timeline"],
                condition=Q(status=CompactionStatus.RUNNING),
                name="timeline_compaction_one_running",
            ),
            # GET …/compactions/{id}: a context's compaction by its public id.
            models.UniqueConstraint(fields=["timeline", "public_id"], name="timeline_cmp_public_id_uniq"),
        ]
        indexes = [
            # The latest applied compaction of a timeline: the visible window's start.
            models.Index(
                fields=["timeline", "-id"],
                condition=Q(status=CompactionStatus.APPLIED),
                name="timeline_cmp_applied_idx",
            ),
        ]

    def __str__(self) -> str:
        return f"compaction {self.pk} ({self.status})"


class RenderRecordQuerySet(OwnedQuerySet["RenderRecord"]):
    pass


class RenderRecord(OwnedModel):
    """One render that was not a dry run: the cache explainer's history (``rendering/prefix.py``).

    The prefix fingerprint is kept bounded (``rendering.prefix.Fingerprint``: at most 1,024
    checkpoints of an 8-byte cumulative digest and an 8-byte digest of the chunk's seqs) so the next
    render can say how much of it the provider could reuse. Bounded per timeline by ``TIMELINE_RENDER_HISTORY_MAX`` (each render trims its
    timeline in the transaction that inserts it) and ``TIMELINE_RENDER_HISTORY_DAYS`` (the beat job).
    """

    timeline = models.ForeignKey(Timeline, on_delete=models.CASCADE, related_name="renders")
    tenant = _owner_key(Tenant)
    conversation = _owner_key(Conversation)
    rendered_at = models.DateTimeField()
    reason = models.CharField(max_length=24, choices=[(r, r) for r in CACHE_REASONS])
    previous_render_at = models.DateTimeField(null=True, blank=True)
    reused_prefix_tokens = models.BigIntegerField(default=0)
    first_changed_index = models.IntegerField(null=True, blank=True)
    first_changed_path = models.CharField(max_length=1024, blank=True)
    system_tokens = models.BigIntegerField(default=0)
    visible_tokens = models.BigIntegerField(default=0)
    tail_tokens = models.BigIntegerField(default=0)
    total_tokens = models.BigIntegerField(default=0)
    prefix_tokens = models.BigIntegerField(default=0)
    cache_points = models.JSONField(default=list, blank=True)
    pruning_status = models.CharField(max_length=16)
    hidden_count = models.IntegerField(default=0)
    # The compaction this render applied, if any; and the seq of the summary its window starts
    # with (a new one means a compaction was applied since the previous render).
    compaction = models.ForeignKey(
        Compaction, null=True, blank=True, on_delete=models.SET_NULL, related_name="renders"
    )
    summary_seq = models.BigIntegerField(null=True, blank=True)
    settings_key = models.CharField(max_length=64)
    segment_count = models.IntegerField(default=0)
    # A checkpoint every ``segment_stride`` segments (``rendering.prefix.Fingerprint``): at most
    # 1,024 of them, 16 KiB whatever the window. 0: a record written before (migration 0007's
    # encoding, a digest per segment and the seqs as compressed deltas), still read as such.
    segment_stride = models.IntegerField(default=0)
    # What came before the timeline (format, system prompt), hashed: a change there is no hide.
    segment_seed = models.BinaryField(default=b"")
    segment_digests = models.BinaryField(default=b"")
    segment_seqs = models.BinaryField(default=b"")
    # What the admin's past-render view needs besides the stored blocks to render it again exactly
    # (``rendering/replay.py``): the window's shape (its blocks are the stored ones of seq
    # ``window_first_seq``..``window_last_seq`` but ``window_skipped_seqs``, after the summary of
    # ``summary_seq``), the seqs hidden in it at that moment, both packed by
    # ``window_shape.pack_seq_set`` (about 1–2 bytes per hidden or left-out block, nothing for a window
    # without), and the inputs (``replay.render_inputs``: resolved settings, format, filters, the
    # system prompt's digest). Empty on renders recorded before migration 0012.
    window_first_seq = models.BigIntegerField(null=True, blank=True)
    window_last_seq = models.BigIntegerField(null=True, blank=True)
    window_skipped_seqs = models.BinaryField(default=b"")
    hidden_seqs = models.BinaryField(default=b"")
    render_inputs = models.JSONField(default=dict, blank=True)
    # The public id answered as ``render_id`` (null only on rows recorded before it existed).
    public_id = models.CharField(max_length=32, null=True, blank=True)
    # The usage forecast (``rendering/usage/forecast.py``) as answered, and what this render left
    # in the provider's cache as the forecast believes it: the prefix seed's digest (hex) and the
    # Anthropic entries it wrote or refreshed, ``[[digest hex, expiry ISO-8601]]`` (<= 5).
    usage_forecast = models.JSONField(default=dict, blank=True)
    cache_head = models.CharField(max_length=16, blank=True)
    cache_touched = models.JSONField(default=list, blank=True)
    # Tokens TTL pruning hid at this render (their full cost minus their replacement's).
    pruned_tokens = models.BigIntegerField(default=0)
    # What a summary request needs to start with this render's prefix byte for byte while it is
    # cached (compaction reading the cache): the format, the model the agent named, and the system
    # prompt when the agent gave it as text and declared no tools (else empty: never reused).
    format = models.CharField(max_length=24, blank=True)
    model = models.CharField(max_length=100, blank=True)
    system_text = models.TextField(blank=True)

    objects = RenderRecordQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["public_id"], name="timeline_render_public_id_uniq"),
        ]
        indexes = [
            # The previous render of a timeline (every render) and the admin's history, newest first.
            models.Index(fields=["timeline", "-id"], name="timeline_render_recent_idx"),
        ]

    def __str__(self) -> str:
        return f"render {self.pk} ({self.reason})"

    @staticmethod
    def new_public_id() -> str:
        return "rnd_" + secrets.token_urlsafe(16)


class SourceQuerySet(OwnedQuerySet["Source"]):
    pass


class Source(OwnedModel):
    """A row of the sources pool; ``sid`` is stable once given."""

    timeline = models.ForeignKey(Timeline, on_delete=models.CASCADE, related_name="sources")
    tenant = _owner_key(Tenant)
    conversation = _owner_key(Conversation)
    sid = models.IntegerField()
    url = models.CharField(max_length=2048)
    title = models.CharField(max_length=1000, blank=True)
    text = models.TextField(blank=True)
    meta = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = SourceQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["timeline", "sid"], name="timeline_source_sid_uniq"),
            models.UniqueConstraint(fields=["timeline", "url"], name="timeline_source_url_uniq"),
        ]

    def __str__(self) -> str:
        return f"[{self.sid}] {self.url}"


class RenderUsage(models.Model):
    """What the provider billed for one render, reported by the client
    (``POST …/renders/{render_id}/usage/``), beside what the forecast promised, priced.

    Outlives the render history's trimming (the render link goes null; the figures stay), so a
    conversation's totals stay whole. One row per render: reporting again is idempotent.
    """

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="usages")
    timeline = models.ForeignKey(Timeline, on_delete=models.CASCADE, related_name="usages")
    render = models.OneToOneField(
        RenderRecord, null=True, blank=True, on_delete=models.SET_NULL, related_name="usage"
    )
    render_public_id = models.CharField(max_length=32)
    rendered_at = models.DateTimeField()
    reported_at = models.DateTimeField()
    provider = models.CharField(max_length=16)
    model = models.CharField(max_length=100)
    # The price table's entry that priced it ("" when the model is not in the table: no cost).
    priced_model = models.CharField(max_length=100, blank=True)
    # The request body as reported: a second report must equal it.
    reported = models.JSONField(default=dict)
    uncached_input_tokens = models.BigIntegerField()
    cache_read_tokens = models.BigIntegerField()
    cache_write_5m_tokens = models.BigIntegerField()
    cache_write_1h_tokens = models.BigIntegerField()
    output_tokens = models.BigIntegerField()
    forecast_read_tokens = models.BigIntegerField(default=0)
    forecast_write_5m_tokens = models.BigIntegerField(default=0)
    forecast_write_1h_tokens = models.BigIntegerField(default=0)
    forecast_uncached_tokens = models.BigIntegerField(default=0)
    cost_usd = models.DecimalField(max_digits=24, decimal_places=12, null=True, blank=True)
    cost_without_cache_usd = models.DecimalField(max_digits=24, decimal_places=12, null=True, blank=True)
    # The forecast promised a cache read the provider did not give (within 1 %).
    unexplained_miss = models.BooleanField(default=False)
    # Forecast and actual agree: both read or both missed, and the read tokens within 1 %.
    forecast_agreed = models.BooleanField(default=False)
    cache_miss_reason = models.CharField(max_length=40, blank=True)
    first_changed_path = models.CharField(max_length=1024, blank=True)
    compacted_tokens = models.BigIntegerField(default=0)
    pruned_tokens = models.BigIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["timeline", "render_public_id"], name="timeline_usage_render_uniq"
            ),
        ]
        indexes = [
            # A tenant's usage over a date range (GET /api/v1/usage/?since=&until=, the CSV export).
            models.Index(fields=["tenant", "rendered_at"], name="timeline_usage_tenant_at_idx"),
            # A conversation's totals and its per-render chart.
            models.Index(fields=["conversation", "rendered_at"], name="timeline_usage_conv_at_idx"),
        ]

    def __str__(self) -> str:
        return f"usage {self.render_public_id}"

    @property
    def input_tokens(self) -> int:
        return (
            self.uncached_input_tokens
            + self.cache_read_tokens
            + self.cache_write_5m_tokens
            + self.cache_write_1h_tokens
        )
