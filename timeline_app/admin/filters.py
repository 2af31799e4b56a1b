"""The list filters of the admin; each reads through ``admin.selectors``."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone

from timeline_app.admin import selectors as admin_selectors
from timeline_app.domain import blocks as b


class HasHiddenBlocksFilter(admin.SimpleListFilter):
    title = "hidden blocks"
    parameter_name = "hidden_blocks"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("yes", "Has hidden blocks"), ("no", "No hidden blocks")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if self.value() in {"yes", "no"}:
            return admin_selectors.conversations_with_hidden_blocks(queryset, present=self.value() == "yes")
        return queryset


class CompactionFailedFilter(admin.SimpleListFilter):
    title = "compaction failed"
    parameter_name = "compaction_failed"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("last", "Last attempt failed"), ("any", "Any attempt failed")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if self.value() in {"last", "any"}:
            return admin_selectors.conversations_with_failed_compaction(
                queryset, last_only=self.value() == "last"
            )
        return queryset


class ActivityFilter(admin.SimpleListFilter):
    title = "last activity"
    parameter_name = "active"
    WINDOWS = {"1h": timedelta(hours=1), "1d": timedelta(days=1), "7d": timedelta(days=7)}

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("1h", "In the last hour"), ("1d", "In the last day"), ("7d", "In the last 7 days")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        window = self.WINDOWS.get(self.value() or "")
        if window is None:
            return queryset
        return admin_selectors.conversations_active_since(queryset, since=timezone.now() - window)


class BlockTypeFilter(admin.SimpleListFilter):
    """Fixed choices: listing the distinct types of a huge table would scan it."""

    title = "type"
    parameter_name = "type"
    TYPES = (
        b.TURN_HEADER,
        b.USER_PROMPT,
        b.USER_ATTACHMENT,
        b.ASSISTANT_COMPLETION,
        b.TOOL_CALL,
        b.TOOL_RESULT,
        b.NOTES,
        b.PLAN,
        b.PLAN_ACK,
        b.SUMMARY,
    )

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [(t, t) for t in self.TYPES]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        return queryset.filter(type=self.value()) if self.value() else queryset


class TenantFilter(admin.RelatedFieldListFilter):
    """The tenant filter, offering only the tenants the staff user may see."""

    def field_choices(self, field: Any, request: HttpRequest, model_admin: Any) -> list[tuple[str, Any]]:
        tenants = admin_selectors.staff_tenant_ids(user=request.user)
        return [(str(pk), name) for pk, name in admin_selectors.tenant_choices(tenant_ids=tenants)]
