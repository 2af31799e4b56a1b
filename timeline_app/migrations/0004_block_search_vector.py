"""Search indexed on PostgreSQL (issue 12.14): a stored, generated ``search_vector`` column on
blocks with a GIN index. ``selectors.blocks_search`` matches on exactly this column.

The column is PostgreSQL's own (``GENERATED ALWAYS … STORED``): the database fills it on every
insert and hide, so no write path has to. It is not a model field (SQLite, the embedded mode, has no
tsvector and searches with LIKE); on SQLite this migration does nothing. The text is cut at 100,000
characters and the replacement text at 20,000, which keeps every vector far below PostgreSQL's
1 MB tsvector limit: a block of 1,000,000 characters of distinct words still stores.
Migration 0008 takes the replacement text out of the vector (a hide then re-indexes nothing).
"""

from django.db import migrations

COLUMN_SQL = """
ALTER TABLE timeline_app_block ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (
    to_tsvector('simple'::regconfig,
        left(text, 100000) || ' ' || path || ' ' || left(replacement_text, 20000))
) STORED;
CREATE INDEX timeline_block_search_idx ON timeline_app_block USING gin (search_vector);
"""

REVERSE_SQL = """
DROP INDEX IF EXISTS timeline_block_search_idx;
ALTER TABLE timeline_app_block DROP COLUMN IF EXISTS search_vector;
"""


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(COLUMN_SQL)


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(REVERSE_SQL)


class Migration(migrations.Migration):
    dependencies = [
        ("timeline_app", "0003_conversation_activity_index"),
    ]

    operations = [
        migrations.RunPython(forwards, backwards),
    ]
