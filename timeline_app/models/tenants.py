"""Tenants, their API keys and their conversations: the rows every other table belongs to."""

from __future__ import annotations

import hashlib
import secrets

from django.conf import settings
from django.db import models


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
