"""Every unique constraint below a conversation includes the conversation (issue 26).

Sharding by conversation (Citus, docs/scaling.md "Unique constraints and the shard key") can only
enforce a unique constraint that includes the distribution column. Each constraint keeps its rule
(a timeline has one conversation, so ``(timeline, seq)`` and ``(timeline, seq, conversation)``
refuse the same rows) and gains ``conversation_id`` as its last column, so the index still serves
every lookup by its leading columns. The two one-to-one fields (a compaction's summary block, a
usage report's render) become foreign keys with a unique constraint ``(field, conversation)``: a
one-to-one field's own unique constraint is on its column alone. The render's public id, unique
across the table before, is unique per conversation now (random 128-bit ids; every lookup names
the context).

Safe on a large table, writes going on (the migration is not atomic). On PostgreSQL, per
constraint: the new unique index is built ``CONCURRENTLY`` (reads and writes go on; a half-built
index left by an interrupted run is dropped and built again), attached as the constraint
(``ADD CONSTRAINT … UNIQUE USING INDEX``: a catalog change; partial ones stay unique indexes, as
Django creates them), then the old one is dropped: the rule holds throughout. The attach and the
drops take a brief ``ACCESS EXCLUSIVE`` lock each (no scan). SQLite (the embedded mode) changes the
constraints the ordinary way.
"""

from django.db import migrations, models
from django.db.migrations.operations.base import Operation
from django.db.models import Q


def _valid_index(schema_editor, name: str) -> bool:
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            "SELECT i.indisvalid FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid WHERE c.relname = %s",
            [name],
        )
        row = cursor.fetchone()
    return bool(row and row[0])


def _is_constraint(schema_editor, name: str) -> bool:
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_constraint WHERE conname = %s", [name])
        return cursor.fetchone() is not None


def build_unique(schema_editor, table: str, name: str, columns: list[str], where: str | None) -> None:
    """The unique index built concurrently, then attached as a constraint (unless partial)."""
    if not _valid_index(schema_editor, name):
        schema_editor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {name}")
        condition = f" WHERE {where}" if where else ""
        schema_editor.execute(
            f"CREATE UNIQUE INDEX CONCURRENTLY {name} ON {table} ({', '.join(columns)}){condition}"
        )
    if where is None and not _is_constraint(schema_editor, name):
        schema_editor.execute(f"ALTER TABLE {table} ADD CONSTRAINT {name} UNIQUE USING INDEX {name}")


def drop_unique(schema_editor, table: str, name: str, where: str | None) -> None:
    if where is None:
        schema_editor.execute(f"ALTER TABLE {table} DROP CONSTRAINT IF EXISTS {name}")
    else:
        schema_editor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {name}")


def one_to_one_constraints(schema_editor, table: str, column: str) -> list[str]:
    """The unique constraint of a one-to-one field on its column alone (PostgreSQL named it)."""
    with schema_editor.connection.cursor() as cursor:
        constraints = schema_editor.connection.introspection.get_constraints(cursor, table)
    return [
        name
        for name, info in constraints.items()
        if info["unique"] and not info["primary_key"] and info["columns"] == [column]
    ]


class OnPostgres(Operation):
    """``operation`` as usual (its state change always, its schema change on SQLite); on
    PostgreSQL, ``forwards`` / ``backwards`` (given the schema editor) do the schema change instead."""

    reversible = True

    def __init__(self, operation, forwards, backwards):
        self.operation = operation
        self.forwards = forwards
        self.backwards = backwards

    def state_forwards(self, app_label, state):
        self.operation.state_forwards(app_label, state)

    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor == "postgresql":
            self.forwards(schema_editor)
        else:
            self.operation.database_forwards(app_label, schema_editor, from_state, to_state)

    def database_backwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor == "postgresql":
            self.backwards(schema_editor)
        else:
            self.operation.database_backwards(app_label, schema_editor, from_state, to_state)

    def describe(self):
        return f"{self.operation.describe()} (concurrently on PostgreSQL)"


def _columns(fields: list[str]) -> list[str]:
    return [f"{field}_id" if field in ("timeline", "conversation", "summary_block", "render") else field for field in fields]


def add(model: str, table: str, fields: list[str], name: str, condition: Q | None = None, where: str | None = None):
    constraint = (
        models.UniqueConstraint(fields=fields, condition=condition, name=name)
        if condition is not None
        else models.UniqueConstraint(fields=fields, name=name)
    )
    columns = _columns(fields)
    return OnPostgres(
        migrations.AddConstraint(model_name=model, constraint=constraint),
        lambda editor: build_unique(editor, table, name, columns, where),
        lambda editor: drop_unique(editor, table, name, where),
    )


def remove(model: str, table: str, fields: list[str], name: str, where: str | None = None):
    columns = _columns(fields)
    return OnPostgres(
        migrations.RemoveConstraint(model_name=model, name=name),
        lambda editor: drop_unique(editor, table, name, where),
        lambda editor: build_unique(editor, table, name, columns, where),
    )


def one_to_one_to_foreign_key(model: str, table: str, column: str, field: models.ForeignKey):
    """The state's field becomes ``field``; on PostgreSQL the one-to-one's unique constraint goes
    (its foreign-key constraint stays) and comes back on the way back."""

    def forwards(editor):
        for name in one_to_one_constraints(editor, table, column):
            editor.execute(f"ALTER TABLE {table} DROP CONSTRAINT {name}")

    def backwards(editor):
        build_unique(editor, table, f"{table}_{column}_key", [column], None)

    return OnPostgres(migrations.AlterField(model_name=model, name=column.removesuffix("_id"), field=field), forwards, backwards)


BLOCK, COMPACTION, RECORD, USAGE, SOURCE = (
    "timeline_app_block",
    "timeline_app_compaction",
    "timeline_app_renderrecord",
    "timeline_app_renderusage",
    "timeline_app_source",
)
CLIENT_ID = "client_id IS NOT NULL"
RUNNING = "status = 'running'"


class Migration(migrations.Migration):
    atomic = False  # CREATE/DROP INDEX CONCURRENTLY

    dependencies = [
        ("timeline_app", "0016_row_level_security"),
    ]

    operations = [
        add("block", BLOCK, ["timeline", "seq", "conversation"], "timeline_block_seq_conv_uniq"),
        remove("block", BLOCK, ["timeline", "seq"], "timeline_block_seq_uniq"),
        add(
            "block",
            BLOCK,
            ["timeline", "client_id", "conversation"],
            "timeline_block_client_conv_uniq",
            condition=Q(client_id__isnull=False),
            where=CLIENT_ID,
        ),
        remove("block", BLOCK, ["timeline", "client_id"], "timeline_block_client_id_uniq", where=CLIENT_ID),
        add(
            "compaction",
            COMPACTION,
            ["timeline", "conversation"],
            "timeline_cmp_running_conv_uniq",
            condition=Q(status="running"),
            where=RUNNING,
        ),
        remove("compaction", COMPACTION, ["timeline"], "timeline_compaction_one_running", where=RUNNING),
        add("compaction", COMPACTION, ["timeline", "public_id", "conversation"], "timeline_cmp_public_id_conv_uniq"),
        remove("compaction", COMPACTION, ["timeline", "public_id"], "timeline_cmp_public_id_uniq"),
        add("compaction", COMPACTION, ["summary_block", "conversation"], "timeline_cmp_summary_conv_uniq"),
        one_to_one_to_foreign_key(
            "compaction",
            COMPACTION,
            "summary_block_id",
            models.ForeignKey(
                blank=True,
                db_index=False,
                null=True,
                on_delete=models.deletion.CASCADE,
                related_name="+",
                to="timeline_app.block",
            ),
        ),
        add("renderrecord", RECORD, ["public_id", "conversation"], "timeline_render_public_id_conv_uniq"),
        remove("renderrecord", RECORD, ["public_id"], "timeline_render_public_id_uniq"),
        add(
            "renderusage",
            USAGE,
            ["timeline", "render_public_id", "conversation"],
            "timeline_usage_render_conv_uniq",
        ),
        remove("renderusage", USAGE, ["timeline", "render_public_id"], "timeline_usage_render_uniq"),
        add("renderusage", USAGE, ["render", "conversation"], "timeline_usage_render_id_conv_uniq"),
        one_to_one_to_foreign_key(
            "renderusage",
            USAGE,
            "render_id",
            models.ForeignKey(
                blank=True,
                db_index=False,
                null=True,
                on_delete=models.deletion.SET_NULL,
                related_name="+",
                to="timeline_app.renderrecord",
            ),
        ),
        add("source", SOURCE, ["timeline", "sid", "conversation"], "timeline_source_sid_conv_uniq"),
        remove("source", SOURCE, ["timeline", "sid"], "timeline_source_sid_uniq"),
        add("source", SOURCE, ["timeline", "url", "conversation"], "timeline_source_url_conv_uniq"),
        remove("source", SOURCE, ["timeline", "url"], "timeline_source_url_uniq"),
    ]
