"""Every row below a conversation carries its tenant and its conversation (issue 26).

``tenant_id`` is the row-level security key (migration 0016, ``timeline_app.tenancy``) and
``conversation_id`` the sharding key (docs/scaling.md: Citus distributes by conversation). Both are
copied from the parent as a row is inserted (``models.OwnedModel``) and never change; neither has a
foreign-key constraint or an index of its own (every query names the timeline first).

Safe on a large table, writes going on (the migration is not atomic):

1. the columns are added nullable: a catalog change, no rewrite;
2. the backfill updates ``BACKFILL_BATCH`` rows by primary-key range per statement, each its own
   short transaction (row locks on that range only); timelines first, then the rows below them;
3. ``NOT NULL`` without a long exclusive lock: ``CHECK (col IS NOT NULL) NOT VALID`` (instant), then
   ``VALIDATE CONSTRAINT`` (scans under a lock that lets reads and writes go on), then ``SET NOT
   NULL``, which PostgreSQL 12+ proves from the valid check without scanning again, and the check
   goes. A row inserted by a process still running the previous release between steps 2 and 3 is
   caught by a last pass over the NULL rows just before step 3 (run this migration with the old
   release stopped, or expect its inserts to fail once the check is in place).

Measured with ``scripts/backfill_bench.py`` (docs/operations.md): 1,000,000 blocks.
SQLite (the embedded mode) alters the columns the ordinary way.
"""

from django.db import migrations, models
from django.db.models import deletion

BACKFILL_BATCH = 10_000

# (table, sets conversation_id too, parent table, the parent's key on this table)
TABLES = [
    ("timeline_app_timeline", False, "timeline_app_conversation", "conversation_id"),
    ("timeline_app_block", True, "timeline_app_timeline", "timeline_id"),
    ("timeline_app_compaction", True, "timeline_app_timeline", "timeline_id"),
    ("timeline_app_renderrecord", True, "timeline_app_timeline", "timeline_id"),
    ("timeline_app_source", True, "timeline_app_timeline", "timeline_id"),
]
MODELS = {
    "timeline": ("tenant",),
    "block": ("tenant", "conversation"),
    "compaction": ("tenant", "conversation"),
    "renderrecord": ("tenant", "conversation"),
    "source": ("tenant", "conversation"),
}


def _key(to: str, *, null: bool) -> models.ForeignKey:
    return models.ForeignKey(
        db_constraint=False,
        db_index=False,
        editable=False,
        null=null,
        on_delete=deletion.CASCADE,
        related_name="+",
        to=f"timeline_app.{to}",
    )


def _update(table: str, below: bool, parent: str, parent_key: str, *, batched: bool = True) -> str:
    if below:
        columns, values = "(tenant_id, conversation_id)", "p.tenant_id, p.conversation_id"
    else:
        columns, values = "(tenant_id)", "p.tenant_id"
    # A row-valued SET: PostgreSQL and SQLite (3.15+) both take it.
    return (
        f"UPDATE {table} SET {columns} = (SELECT {values} FROM {parent} p WHERE p.id = {table}.{parent_key})"
        + (f" WHERE {table}.id >= %s AND {table}.id < %s AND" if batched else " WHERE")
        + f" {table}.tenant_id IS NULL"
    )


def backfill(apps, schema_editor) -> None:
    connection = schema_editor.connection
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SELECT set_config('timeline.scope', 'all', false)")
        for table, below, parent, parent_key in TABLES:
            cursor.execute(f"SELECT min(id), max(id) FROM {table}")
            low, high = cursor.fetchone()
            if low is None:
                continue
            update = _update(table, below, parent, parent_key)
            for start in range(low, high + 1, BACKFILL_BATCH):
                cursor.execute(update, [start, start + BACKFILL_BATCH])


class OnSQLite(migrations.operations.base.Operation):
    """``operation`` in the state and, on SQLite only, in the database (PostgreSQL takes the
    lock-free path of ``require_not_null``)."""

    def __init__(self, operation: migrations.operations.base.Operation) -> None:
        self.operation = operation

    def deconstruct(self):  # type: ignore[no-untyped-def]
        return (self.__class__.__name__, [self.operation], {})

    def state_forwards(self, app_label, state):  # type: ignore[no-untyped-def]
        self.operation.state_forwards(app_label, state)

    def database_forwards(self, app_label, schema_editor, from_state, to_state):  # type: ignore[no-untyped-def]
        if schema_editor.connection.vendor == "sqlite":
            self.operation.database_forwards(app_label, schema_editor, from_state, to_state)

    def database_backwards(self, app_label, schema_editor, from_state, to_state):  # type: ignore[no-untyped-def]
        if schema_editor.connection.vendor == "sqlite":
            self.operation.database_backwards(app_label, schema_editor, from_state, to_state)


def require_not_null(apps, schema_editor) -> None:
    connection = schema_editor.connection
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        for table, below, parent, parent_key in TABLES:
            # Rows a still-running older release inserted since the batches passed them.
            cursor.execute(_update(table, below, parent, parent_key, batched=False))
            for column in ("tenant_id", "conversation_id") if below else ("tenant_id",):
                check = f"{table}_{column}_nn"[:63]
                cursor.execute(f"ALTER TABLE {table} ADD CONSTRAINT {check} CHECK ({column} IS NOT NULL) NOT VALID")
                cursor.execute(f"ALTER TABLE {table} VALIDATE CONSTRAINT {check}")
                cursor.execute(f"ALTER TABLE {table} ALTER COLUMN {column} SET NOT NULL")
                cursor.execute(f"ALTER TABLE {table} DROP CONSTRAINT {check}")


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("timeline_app", "0014_render_usage"),
    ]

    operations = [
        *(
            migrations.AddField(model_name=model_name, name=name, field=_key(name, null=True))
            for model_name, names in MODELS.items()
            for name in names
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop, elidable=True),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(model_name=model_name, name=name, field=_key(name, null=False))
                for model_name, names in MODELS.items()
                for name in names
            ],
            database_operations=[
                *(
                    OnSQLite(migrations.AlterField(model_name=model_name, name=name, field=_key(name, null=False)))
                    for model_name, names in MODELS.items()
                    for name in names
                ),
                migrations.RunPython(require_not_null, migrations.RunPython.noop),
            ],
        ),
    ]
