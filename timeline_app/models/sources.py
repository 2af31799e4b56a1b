"""The sources pool of a timeline."""

from __future__ import annotations

from django.db import models

from timeline_app.models.owned import OwnedModel, OwnedQuerySet, owner_key
from timeline_app.models.tenants import Conversation, Tenant
from timeline_app.models.timelines import Timeline


class SourceQuerySet(OwnedQuerySet["Source"]):
    pass


class Source(OwnedModel):
    """A row of the sources pool; ``sid`` is stable once given."""

    timeline = models.ForeignKey(Timeline, on_delete=models.CASCADE, related_name="sources")
    tenant = owner_key(Tenant)
    conversation = owner_key(Conversation)
    sid = models.IntegerField()
    url = models.CharField(max_length=2048)
    title = models.CharField(max_length=1000, blank=True)
    text = models.TextField(blank=True)
    meta = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = SourceQuerySet.as_manager()

    class Meta:
        constraints = [
            # Unique constraints end with the conversation, the shard key (docs/scaling.md
            # "Unique constraints and the shard key"; migration 0017).
            models.UniqueConstraint(
                fields=["timeline", "sid", "conversation"], name="timeline_source_sid_conv_uniq"
            ),
            models.UniqueConstraint(
                fields=["timeline", "url", "conversation"], name="timeline_source_url_conv_uniq"
            ),
        ]

    def __str__(self) -> str:
        return f"[{self.sid}] {self.url}"
