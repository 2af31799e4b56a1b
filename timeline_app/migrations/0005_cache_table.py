"""The database cache's table (``settings.CACHE_TABLE``): the shared cache when no Redis is
configured, so the compact throttle counts per key across processes (issue 12.15). ``migrate``
creates it; nobody has to remember ``createcachetable``."""

from django.core.management.commands.createcachetable import Command
from django.db import migrations

TABLE = "timeline_cache"  # settings.CACHE_TABLE


def create_cache_table(apps, schema_editor):
    # Created whichever cache is configured now, so switching from Redis to the database later works.
    command = Command()
    command.verbosity = 0
    command.create_table(schema_editor.connection.alias, TABLE, dry_run=False)


def drop_cache_table(apps, schema_editor):
    schema_editor.execute(f"DROP TABLE IF EXISTS {schema_editor.quote_name(TABLE)}")


class Migration(migrations.Migration):
    dependencies = [
        ("timeline_app", "0004_block_search_vector"),
    ]

    operations = [
        migrations.RunPython(create_cache_table, drop_cache_table),
    ]
