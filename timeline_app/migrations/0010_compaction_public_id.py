"""Compactions get a public id (``cmp_`` + 16 hex digits) for ``GET …/compactions/{id}``, and the
status ``queued`` (``POST …/compact/`` creates the row before its task runs, so the 202 can name it).

Safe on a big table: the column is added nullable without a default (no rewrite), existing rows are
filled in batches of 1,000 by primary key, and the default lives in Python only. The unique index
``(timeline, public_id)`` is built after the backfill. The status check constraint is replaced to
allow ``queued`` (the compaction table holds one row per compaction run: small next to blocks).
"""

import secrets

from django.db import migrations, models
from django.db.models import Q

import timeline_app.models

BATCH = 1000
STATUSES = ["queued", "running", "applied", "rejected", "skipped", "failed"]


def fill_public_ids(apps, schema_editor):
    Compaction = apps.get_model("timeline_app", "Compaction")
    while True:
        pks = list(
            Compaction.objects.filter(public_id__isnull=True)
            .order_by("pk")
            .values_list("pk", flat=True)[:BATCH]
        )
        if not pks:
            return
        for pk in pks:
            Compaction.objects.filter(pk=pk).update(public_id=f"cmp_{secrets.token_hex(8)}")


class Migration(migrations.Migration):
    dependencies = [("timeline_app", "0009_render_record_bounded_fingerprint")]

    operations = [
        migrations.AddField(
            model_name="compaction",
            name="public_id",
            field=models.CharField(blank=True, max_length=32, null=True),
        ),
        migrations.RunPython(fill_public_ids, migrations.RunPython.noop, elidable=True),
        migrations.AlterField(
            model_name="compaction",
            name="public_id",
            field=models.CharField(
                blank=True, default=timeline_app.models.new_compaction_id, max_length=32, null=True
            ),
        ),
        migrations.AddConstraint(
            model_name="compaction",
            constraint=models.UniqueConstraint(
                fields=("timeline", "public_id"), name="timeline_cmp_public_id_uniq"
            ),
        ),
        migrations.AlterField(
            model_name="compaction",
            name="status",
            field=models.CharField(
                choices=[(s, s.capitalize()) for s in STATUSES], default="running", max_length=16
            ),
        ),
        migrations.RemoveConstraint(model_name="compaction", name="timeline_compaction_status_valid"),
        migrations.AddConstraint(
            model_name="compaction",
            constraint=models.CheckConstraint(
                condition=Q(status__in=STATUSES), name="timeline_compaction_status_valid"
            ),
        ),
    ]
