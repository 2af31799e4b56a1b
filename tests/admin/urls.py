"""Admin URLs by name, so tests read like the pages they open."""

from __future__ import annotations

from django.urls import reverse


def changelist(model: str) -> str:
    return reverse(f"admin:timeline_app_{model}_changelist")


def add(model: str) -> str:
    return reverse(f"admin:timeline_app_{model}_add")


def change(model: str, pk: int) -> str:
    return reverse(f"admin:timeline_app_{model}_change", args=[pk])


def delete(model: str, pk: int) -> str:
    return reverse(f"admin:timeline_app_{model}_delete", args=[pk])


def conversation(pk: int, **params: str) -> str:
    url = change("conversation", pk)
    return url + ("?" + "&".join(f"{k}={v}" for k, v in params.items()) if params else "")


def render_preview(pk: int, **params: str) -> str:
    url = reverse("admin:timeline_app_conversation_render", args=[pk])
    return url + ("?" + "&".join(f"{k}={v}" for k, v in params.items()) if params else "")


def compact(pk: int) -> str:
    return reverse("admin:timeline_app_conversation_compact", args=[pk])


def export(pk: int) -> str:
    return reverse("admin:timeline_app_conversation_export", args=[pk])


def revert(pk: int) -> str:
    return reverse("admin:timeline_app_conversation_revert", args=[pk])
