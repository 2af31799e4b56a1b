"""Model instances from a constant, hand-written statement (issue 38).

The two reads every API request makes (its key with the key's tenant, its context with the
context's conversation) were ORM querysets: Django compiles a queryset's SQL anew on every
evaluation (joins, select list, converters), and for these two that compiling cost more CPU than
the rest of the request's reads together (a quarter of an append's web-process CPU, by the
profile in docs/scaling.md). The statement is the one the ORM sent, written once; each row is
turned into instances the way the ORM's iterator does (``Model.from_db`` with the backend's and
the field's converters), so callers get the same objects (``_state.db`` set, not adding)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.db.models import Model

M = TypeVar("M", bound=Model)
R = TypeVar("R", bound=Model)

Converter = Callable[[Any, Any, Any], Any]


class Columns(Generic[M]):
    """A model's concrete columns in a select list, and the instance a row's slice of them makes."""

    def __init__(self, model: type[M]) -> None:
        self.model = model
        self.table = model._meta.db_table
        self.fields = list(model._meta.concrete_fields)
        self.attnames = [field.attname for field in self.fields]
        self._converters: dict[str, list[tuple[int, list[Converter], Any]]] = {}

    def __len__(self) -> int:
        return len(self.fields)

    def select(self) -> str:
        return ", ".join(f'"{self.table}"."{field.column}"' for field in self.fields)

    def _converters_for(self, using: str) -> list[tuple[int, list[Converter], Any]]:
        """What the ORM's compiler applies to each column (``SQLCompiler.get_converters``): the
        backend's (SQLite's datetimes) then the field's (JSON). Once per connection alias."""
        known = self._converters.get(using)
        if known is None:
            connection = connections[using]
            known = []
            for index, field in enumerate(self.fields):
                column = field.get_col(self.table)
                found = connection.ops.get_db_converters(column) + column.get_db_converters(connection)
                if found:
                    known.append((index, found, column))
            self._converters[using] = known
        return known

    def instance(self, row: Sequence[Any], start: int, using: str) -> M:
        values = list(row[start : start + len(self.fields)])
        connection = connections[using]
        for index, converters, column in self._converters_for(using):
            for convert in converters:
                values[index] = convert(values[index], column, connection)
        return self.model.from_db(using, self.attnames, values)


def one_with_related(
    sql: str, params: Sequence[Any], main: Columns[M], related: Columns[R]
) -> tuple[M, R] | None:
    """The one row of ``sql`` (``main``'s columns, then ``related``'s) as two instances, on the
    default connection; None when there is no row."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    if row is None:
        return None
    return main.instance(row, 0, DEFAULT_DB_ALIAS), related.instance(row, len(main), DEFAULT_DB_ALIAS)
