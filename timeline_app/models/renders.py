"""The render history (the cache explainer's records) and what the provider billed for a render."""

from __future__ import annotations

import secrets

from django.db import models

from timeline_app.models.compactions import Compaction
from timeline_app.models.owned import OwnedModel, OwnedQuerySet, owner_key
from timeline_app.models.tenants import Conversation, Tenant
from timeline_app.models.timelines import Timeline
from timeline_app.rendering.prefix import CACHE_REASONS


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
    tenant = owner_key(Tenant)
    conversation = owner_key(Conversation)
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
            # Unique per conversation (the shard key, docs/scaling.md "Unique constraints and the
            # shard key"); random 128-bit ids, every lookup names the context (migration 0017).
            models.UniqueConstraint(
                fields=["public_id", "conversation"], name="timeline_render_public_id_conv_uniq"
            ),
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


class RenderUsage(models.Model):
    """What the provider billed for one render, reported by the client
    (``POST …/renders/{render_id}/usage/``), beside what the forecast promised, priced.

    Outlives the render history's trimming (the render link goes null; the figures stay), so a
    conversation's totals stay whole. One row per render: reporting again is idempotent.
    """

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="usages")
    timeline = models.ForeignKey(Timeline, on_delete=models.CASCADE, related_name="usages")
    # One report per render (``timeline_usage_render_id_conv_uniq``, which leads with this column:
    # no index of its own); a foreign key since migration 0017 (a one-to-one field's unique
    # constraint cannot include the shard key).
    render = models.ForeignKey(
        RenderRecord, null=True, blank=True, on_delete=models.SET_NULL, related_name="+", db_index=False
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
            # Unique constraints end with the conversation, the shard key (migration 0017).
            models.UniqueConstraint(
                fields=["timeline", "render_public_id", "conversation"],
                name="timeline_usage_render_conv_uniq",
            ),
            models.UniqueConstraint(
                fields=["render", "conversation"], name="timeline_usage_render_id_conv_uniq"
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
