"""Writes of tenants and their API keys (a key is shown once; only its hash is stored)."""

from __future__ import annotations

from django.utils import timezone

from timeline_app.models import ApiKey, Tenant


def api_key_create(*, tenant_name: str, name: str = "") -> tuple[ApiKey, str]:
    """Create the tenant if needed and a new key for it; the raw key is returned once, never stored."""
    tenant, _ = Tenant.objects.get_or_create(name=tenant_name)
    raw = ApiKey.generate_raw_key()
    key = ApiKey.objects.create(
        tenant=tenant, name=name, prefix=raw[: ApiKey.PREFIX_LENGTH], key_hash=ApiKey.hash_key(raw)
    )
    return key, raw


def api_key_revoke(*, prefix: str) -> int:
    """Revoke every active key whose prefix (or whole key) matches; returns how many."""
    candidates = ApiKey.objects.filter(revoked_at__isnull=True)
    if len(prefix) > ApiKey.PREFIX_LENGTH:
        candidates = candidates.filter(key_hash=ApiKey.hash_key(prefix))
    else:
        candidates = candidates.filter(prefix=prefix)
    return candidates.update(revoked_at=timezone.now())


def api_keys_revoke_named(*, tenant_name: str, name: str) -> int:
    """Revoke the tenant's active keys of that name (``make run`` keeps one valid demo key)."""
    return ApiKey.objects.filter(tenant__name=tenant_name, name=name, revoked_at__isnull=True).update(
        revoked_at=timezone.now()
    )
