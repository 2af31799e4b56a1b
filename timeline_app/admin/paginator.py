"""The admin's paginator for huge tables."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.core.paginator import Paginator
from django.utils.functional import cached_property

from timeline_app.admin import selectors as admin_selectors

if TYPE_CHECKING:
    _Paginator = Paginator[Any]
else:
    _Paginator = Paginator


class EstimatedCountPaginator(_Paginator):
    """A paginator for huge tables: on PostgreSQL an unfiltered list uses the planner's row
    estimate instead of ``COUNT(*)`` (the admin then shows "about N"); filtered lists count."""

    ESTIMATE_ABOVE = 100_000

    @cached_property
    def count(self) -> int:
        queryset: Any = self.object_list
        query = getattr(queryset, "query", None)
        if query is not None and not query.where:
            estimate = admin_selectors.table_row_estimate(queryset=queryset)
            if estimate is not None and estimate > self.ESTIMATE_ABOVE:
                return estimate
        return super().count
