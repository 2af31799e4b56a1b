"""Render records keep what the admin's past-render view needs to render them again exactly
(``rendering/replay.py``): the window's bounds and the seqs left out of it, the seqs hidden in it,
and the render's inputs. Safe on a big table: nullable columns and constant defaults (no rewrite on
PostgreSQL 11+); existing rows keep them empty and are replayed with what can be assumed."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('timeline_app', '0012_tenant_staff_users'),
    ]

    operations = [
        migrations.AddField(
            model_name='renderrecord',
            name='window_first_seq',
            field=models.BigIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='renderrecord',
            name='window_last_seq',
            field=models.BigIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='renderrecord',
            name='window_skipped_seqs',
            field=models.BinaryField(default=b''),
        ),
        migrations.AddField(
            model_name='renderrecord',
            name='hidden_seqs',
            field=models.BinaryField(default=b''),
        ),
        migrations.AddField(
            model_name='renderrecord',
            name='render_inputs',
            field=models.JSONField(blank=True, default=dict),
        ),
    ]
