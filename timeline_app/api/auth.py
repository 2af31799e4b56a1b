"""Bearer API keys, scoped to one tenant."""

from __future__ import annotations

from dataclasses import dataclass

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions
from rest_framework.request import Request

from timeline_app import selectors, tenancy
from timeline_app.models import ApiKey, Tenant


@dataclass(frozen=True)
class ApiClient:
    """The caller behind an API key: what ``request.user`` is for the API."""

    tenant: Tenant
    key: ApiKey
    is_authenticated: bool = True
    is_anonymous: bool = False

    @property
    def pk(self) -> int:
        """Throttling counts per API key."""
        return self.key.pk


class ApiKeyAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request: Request) -> tuple[ApiClient, ApiKey] | None:
        header = authentication.get_authorization_header(request).decode("latin-1")
        if not header:
            return None
        scheme, _, raw = header.partition(" ")
        if scheme != self.keyword or not raw.strip():
            raise exceptions.AuthenticationFailed("use 'Authorization: Bearer <api key>'")
        # Row-level security: the lookup sees only the key row with this hash; then the request
        # runs as the key's tenant (none for an unknown key), before the view reads anything.
        # The lookup's statement itself sets the key's tenant (one round trip, not two).
        tenancy.api_key_lookup_scope(ApiKey.hash_key(raw.strip()))
        key = selectors.api_key_lookup(raw_key=raw.strip(), claim_tenant=True)
        if key is None:
            tenancy.tenant_set(None)
            raise exceptions.AuthenticationFailed("invalid or revoked API key")
        return ApiClient(tenant=key.tenant, key=key), key

    def authenticate_header(self, request: Request) -> str:
        return self.keyword


class ApiKeyAuthenticationScheme(OpenApiAuthenticationExtension):  # type: ignore[no-untyped-call]
    target_class = "timeline_app.api.auth.ApiKeyAuthentication"
    name = "ApiKey"

    def get_security_definition(self, auto_schema: object) -> dict[str, str]:
        return {"type": "http", "scheme": "bearer", "description": "An API key from `create_api_key`."}
