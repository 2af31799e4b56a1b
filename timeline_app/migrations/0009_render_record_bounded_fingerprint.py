"""Render records keep a bounded fingerprint (at most 1,024 checkpoints, ``segment_stride``
segments apart) and the digest of what precedes the timeline. Existing rows get stride 0: migration 0007's encoding, still read as it is. A
constant default: on PostgreSQL 11+ adding the column rewrites nothing."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("timeline_app", "0008_block_hide_in_place"),
    ]

    operations = [
        migrations.AddField(
            model_name="renderrecord",
            name="segment_stride",
            field=models.IntegerField(default=0),
        ),
        migrations.AddField(
            model_name="renderrecord",
            name="segment_seed",
            field=models.BinaryField(default=b""),
        ),
    ]
