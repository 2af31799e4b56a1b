"""Smaller blocks (issue 20.14: ``bench storage`` read 2,449 bytes per 500-character message,
3.6x a plain append-only table; 1,647 and 2.4x after this migration).

* Search indexes an expression instead of a stored column: the GIN index is built over
  ``to_tsvector('simple', left(text, 100000) || ' ' || path)`` itself, and the generated
  ``search_vector`` column (about as large as the text it indexes) goes. ``selectors.blocks_search``
  matches on exactly this expression, so the same blocks match and rank as before. A hide changes
  neither ``text`` nor ``path``, so it stays a HOT update (migration 0008).
* The block table's own index on ``timeline_id`` goes: the (timeline, seq) unique constraint leads
  with it and serves every lookup by timeline.
* The (timeline, type, seq) index holds only the types a query looks up by type (turn headers,
  plans, summaries, a named context's messages), not every prompt, completion and tool result.
* The turn index is (timeline, turn_id): a turn's blocks share one key, which B-tree deduplication
  stores once.

On PostgreSQL every index is built ``CONCURRENTLY`` under a temporary name before the old one is
dropped, so writes go on during the migration; dropping the column is a catalog change (its bytes
are reclaimed as rows are rewritten, or at once by ``VACUUM FULL timeline_app_block``). On SQLite
(the embedded mode, no search column) the indexes change the ordinary way.
"""

from django.db import migrations, models

TABLE = "timeline_app_block"
SEARCH_EXPRESSION = "to_tsvector('simple'::regconfig, left(text, 100000) || ' ' || path)"
# models.INDEXED_TYPES as of this migration.
INDEXED_TYPES = (
    "conv.range.summary",
    "message.assistant",
    "message.system",
    "message.user",
    "react.plan",
    "react.tool.result",
    "turn.header",
)

OLD_INDEXES = [
    models.Index(fields=["timeline", "type", "seq"], name="timeline_block_type_seq_idx"),
    models.Index(fields=["timeline", "turn_id", "seq"], name="timeline_block_turn_idx"),
]
NEW_INDEXES = [
    models.Index(
        fields=["timeline", "type", "seq"],
        condition=models.Q(type__in=INDEXED_TYPES),
        name="timeline_block_type_seq_idx",
    ),
    models.Index(fields=["timeline", "turn_id"], name="timeline_block_turn_idx"),
]


def _timeline_only_indexes(schema_editor) -> list[str]:
    """The non-unique index on (timeline_id) alone: Django named it after a hash."""
    with schema_editor.connection.cursor() as cursor:
        constraints = schema_editor.connection.introspection.get_constraints(cursor, TABLE)
    return [
        name
        for name, info in constraints.items()
        if info["index"] and not info["unique"] and info["columns"] == ["timeline_id"]
    ]


def _swap_indexes(apps, schema_editor, old: list[models.Index], new: list[models.Index]) -> None:
    model = apps.get_model("timeline_app", "Block")
    if schema_editor.connection.vendor != "postgresql":
        for index in old:
            schema_editor.remove_index(model, index)
        for index in new:
            schema_editor.add_index(model, index)
        return
    for index in new:
        temporary = index.clone()
        temporary.name = f"{index.name}_new"
        schema_editor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {temporary.name}")
        schema_editor.execute(temporary.create_sql(model, schema_editor, concurrently=True))
        schema_editor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {index.name}")
        schema_editor.execute(f"ALTER INDEX {temporary.name} RENAME TO {index.name}")


def forwards(apps, schema_editor):
    _swap_indexes(apps, schema_editor, OLD_INDEXES, NEW_INDEXES)
    concurrently = "CONCURRENTLY " if schema_editor.connection.vendor == "postgresql" else ""
    for name in _timeline_only_indexes(schema_editor):
        schema_editor.execute(f"DROP INDEX {concurrently}{schema_editor.quote_name(name)}")
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute("DROP INDEX CONCURRENTLY IF EXISTS timeline_block_search_new")
    schema_editor.execute(
        f"CREATE INDEX CONCURRENTLY timeline_block_search_new ON {TABLE} USING gin (({SEARCH_EXPRESSION}))"
    )
    schema_editor.execute("DROP INDEX CONCURRENTLY IF EXISTS timeline_block_search_idx")
    schema_editor.execute(f"ALTER TABLE {TABLE} DROP COLUMN IF EXISTS search_vector")
    schema_editor.execute("ALTER INDEX timeline_block_search_new RENAME TO timeline_block_search_idx")


def backwards(apps, schema_editor):
    _swap_indexes(apps, schema_editor, NEW_INDEXES, OLD_INDEXES)
    model = apps.get_model("timeline_app", "Block")
    schema_editor.execute(
        schema_editor._create_index_sql(model, fields=[model._meta.get_field("timeline")], suffix="")
    )
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute("DROP INDEX IF EXISTS timeline_block_search_idx")
    schema_editor.execute(
        f"ALTER TABLE {TABLE} ADD COLUMN search_vector tsvector GENERATED ALWAYS AS ({SEARCH_EXPRESSION}) STORED"
    )
    schema_editor.execute(f"CREATE INDEX timeline_block_search_idx ON {TABLE} USING gin (search_vector)")


class Migration(migrations.Migration):
    atomic = False  # CREATE/DROP INDEX CONCURRENTLY

    dependencies = [
        ("timeline_app", "0010_compaction_public_id"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunPython(forwards, backwards)],
            state_operations=[
                migrations.RemoveIndex(model_name="block", name="timeline_block_type_seq_idx"),
                migrations.RemoveIndex(model_name="block", name="timeline_block_turn_idx"),
                migrations.AlterField(
                    model_name="block",
                    name="timeline",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=models.deletion.CASCADE,
                        related_name="blocks",
                        to="timeline_app.timeline",
                    ),
                ),
                migrations.AddIndex(model_name="block", index=NEW_INDEXES[0]),
                migrations.AddIndex(model_name="block", index=NEW_INDEXES[1]),
            ],
        ),
    ]
