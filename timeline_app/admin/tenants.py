"""Tenants and their API keys in the admin. Support staff may view tenants; API keys are for
superusers only, and never shown beyond their prefix."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html
from django.utils.http import urlencode

from timeline_app.admin import display
from timeline_app.admin import selectors as admin_selectors
from timeline_app.admin.admin import ReadOnlyAdmin
from timeline_app.models import ApiKey, Tenant

if TYPE_CHECKING:
    ModelAdmin = admin.ModelAdmin[Any]
else:
    ModelAdmin = admin.ModelAdmin


@admin.register(Tenant)
class TenantAdmin(ModelAdmin):
    list_display = ("name", "created", "conversations")
    search_fields = ("name",)
    ordering = ("name",)
    show_full_result_count = False
    fields = ("name", "staff_users")
    filter_horizontal = ("staff_users",)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Tenant]:
        tenants = admin_selectors.staff_tenant_ids(user=request.user)
        return admin_selectors.in_tenants(super().get_queryset(request), tenants, via="pk")

    def formfield_for_manytomany(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if db_field.name == "staff_users":  # staff only: the list would otherwise offer every account
            kwargs["queryset"] = get_user_model().objects.filter(is_staff=True).order_by("username")
        return super().formfield_for_manytomany(db_field, request, **kwargs)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # deleting a tenant would delete its conversations: not an admin click

    @admin.display(description="created", ordering="created_at")
    def created(self, obj: Tenant) -> str:
        return display.utc(obj.created_at)

    @admin.display(description="conversations")
    def conversations(self, obj: Tenant) -> str:
        url = (
            reverse("admin:timeline_app_conversation_changelist")
            + "?"
            + urlencode({"tenant__id__exact": obj.pk})
        )
        return format_html('<a href="{}">browse</a>', url)


@admin.register(ApiKey)
class ApiKeyAdmin(ReadOnlyAdmin):
    """Keys are created (and shown once) by ``manage.py create_api_key``; never their hash here."""

    list_display = ("prefix_display", "tenant", "name", "created", "revoked")
    list_select_related = ("tenant",)
    list_filter = ("tenant",)
    fields = ("tenant", "name", "prefix_display", "created", "revoked")
    ordering = ("-id",)

    @admin.display(description="key")
    def prefix_display(self, obj: ApiKey) -> str:
        return f"{obj.prefix}…"

    @admin.display(description="created", ordering="created_at")
    def created(self, obj: ApiKey) -> str:
        return display.utc(obj.created_at)

    @admin.display(description="revoked", ordering="revoked_at")
    def revoked(self, obj: ApiKey) -> str:
        return display.utc(obj.revoked_at) if obj.revoked_at else ""
