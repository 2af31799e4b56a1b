import struct
from datetime import UTC, datetime
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from timeline_app.models import RenderRecord
from timeline_app.rendering.prefix import unpack_seqs


@pytest.mark.django_db
def test_models_and_migrations_agree():
    out = StringIO()
    call_command("makemigrations", "--check", "--dry-run", stdout=out)
    assert "No changes detected" in out.getvalue()


@pytest.mark.django_db(transaction=True)
def test_0007_repacks_the_seqs_of_render_records_written_before_it(timeline):
    """Records written before 0007 kept raw 8-byte seqs; after it the explainer reads them as
    compressed deltas, so the migration must repack every old row."""
    before = [("timeline_app", "0006_render_history")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    old = executor.loader.project_state(before).apps.get_model("timeline_app", "RenderRecord")
    seqs = (5, 6, 9, 2**40)
    record = old.objects.create(
        timeline_id=timeline.pk,
        rendered_at=datetime(2026, 11, 1, tzinfo=UTC),
        reason="first_render",
        pruning_status="fresh",
        settings_key="k",
        segment_count=len(seqs),
        segment_seqs=struct.pack(f"<{len(seqs)}q", *seqs),
        segment_tokens=struct.pack(f"<{len(seqs)}Q", 1, 2, 3, 4),
    )
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
    assert unpack_seqs(bytes(RenderRecord.objects.get(pk=record.pk).segment_seqs)) == seqs


def _unique_columns(table: str) -> dict[str, list[str]]:
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, table)
    return {n: i["columns"] for n, i in constraints.items() if i["unique"] and not i["primary_key"]}


@pytest.mark.django_db(transaction=True)
def test_0017_puts_the_conversation_in_every_unique_constraint_and_back(timeline):
    """Both ways with rows present: back to 0016 the one-to-one's and the timeline-only constraints
    return; forward again every constraint below a conversation includes it."""
    executor = MigrationExecutor(connection)
    executor.migrate([("timeline_app", "0016_row_level_security")])
    before = _unique_columns("timeline_app_compaction")
    assert ["summary_block_id"] in before.values()
    assert before["timeline_compaction_one_running"] == ["timeline_id"]
    assert _unique_columns("timeline_app_renderrecord")["timeline_render_public_id_uniq"] == ["public_id"]
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
    for table in ("block", "compaction", "renderrecord", "renderusage", "source"):
        unique = _unique_columns(f"timeline_app_{table}")
        assert unique and all("conversation_id" in columns for columns in unique.values()), table
