"""Row-level security on every tenant-owned table (issue 26; ``timeline_app.tenancy``).

Each table's rows are visible and writable only under its tenant's setting (or the explicit
``all`` scope of a trusted path); ``FORCE`` makes the owner subject too. The API key table also
shows the one row whose hash the caller presented, for authentication. Catalog changes only
(a brief ``ACCESS EXCLUSIVE`` lock per table, no scan). Nothing on SQLite.

A tenant-owned table added later: one ``RowLevelSecurity("<table>")`` in its migration.
"""

from django.db import migrations

from timeline_app.tenancy import RowLevelSecurity


class Migration(migrations.Migration):
    dependencies = [
        ("timeline_app", "0015_tenant_owner_keys"),
    ]

    operations = [
        RowLevelSecurity("timeline_app_apikey", key_lookup=True),
        RowLevelSecurity("timeline_app_conversation"),
        RowLevelSecurity("timeline_app_timeline"),
        RowLevelSecurity("timeline_app_block"),
        RowLevelSecurity("timeline_app_compaction"),
        RowLevelSecurity("timeline_app_renderrecord"),
        RowLevelSecurity("timeline_app_source"),
        RowLevelSecurity("timeline_app_renderusage"),
    ]
