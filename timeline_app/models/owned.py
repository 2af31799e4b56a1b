"""The owner keys every row below a tenant carries (issue 26): its tenant (the row-level security
key) and, below a conversation, its conversation (the sharding key), set on insert."""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar

from django.db import models


def owner_key(model: Any, *, related_name: str = "+") -> Any:
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
        below_timeline = row.owner_parent == "timeline"
        if row.tenant_id is not None and (not below_timeline or row.conversation_id is not None):
            continue
        parent = row._state.fields_cache.get(row.owner_parent)
        if parent is not None and parent.__dict__.get("tenant_id") is not None:
            _set_owner(row, parent.tenant_id, getattr(parent, "conversation_id", parent.pk))
        else:
            missing.setdefault(getattr(row, f"{row.owner_parent}_id"), []).append(row)
    if not missing:
        return
    first = next(iter(missing.values()))[0]
    # The parent model from the row's own foreign key: a timeline's conversation, a row's timeline.
    parent_model = first._meta.get_field(first.owner_parent).related_model
    parents: Any = (
        parent_model.objects.filter(pk__in=missing).values_list("pk", "tenant_id", "conversation_id")
        if first.owner_parent == "timeline"
        else parent_model.objects.filter(pk__in=missing).values_list("pk", "tenant_id", "pk")
    )
    for pk, tenant_id, conversation_id in parents:
        for row in missing[pk]:
            _set_owner(row, tenant_id, conversation_id)


def _set_owner(row: Any, tenant_id: int, conversation_id: int) -> None:
    row.tenant_id = tenant_id
    if row.owner_parent == "timeline":
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

    # The foreign key the owner keys are copied from: a timeline's conversation (``Timeline``
    # overrides it), else the row's timeline.
    owner_parent: ClassVar[str] = "timeline"

    class Meta:
        abstract = True

    def save(self, *args: Any, **kwargs: Any) -> None:
        # The one save() override: the owner keys are the parent's, copied as the row is inserted.
        if self._state.adding:
            fill_owners([self])
        super().save(*args, **kwargs)
