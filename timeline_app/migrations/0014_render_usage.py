"""Issue 23: a public ``render_id`` and the usage forecast on every render record, and the usage
the client reports per render (``RenderUsage``); the summary call's usage on a compaction.

On PostgreSQL the new columns are nullable or carry constant defaults (no table rewrite); the
unique index on ``public_id`` is built over the render history, which the beat job keeps bounded
per timeline (every render trims its context to ``TIMELINE_RENDER_HISTORY_MAX``). Existing records keep a null ``public_id`` (they
were answered without one).
"""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('timeline_app', '0013_render_record_inputs'),
    ]

    operations = [
        migrations.CreateModel(
            name='RenderUsage',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('render_public_id', models.CharField(max_length=32)),
                ('rendered_at', models.DateTimeField()),
                ('reported_at', models.DateTimeField()),
                ('provider', models.CharField(max_length=16)),
                ('model', models.CharField(max_length=100)),
                ('priced_model', models.CharField(blank=True, max_length=100)),
                ('reported', models.JSONField(default=dict)),
                ('uncached_input_tokens', models.BigIntegerField()),
                ('cache_read_tokens', models.BigIntegerField()),
                ('cache_write_5m_tokens', models.BigIntegerField()),
                ('cache_write_1h_tokens', models.BigIntegerField()),
                ('output_tokens', models.BigIntegerField()),
                ('forecast_read_tokens', models.BigIntegerField(default=0)),
                ('forecast_write_5m_tokens', models.BigIntegerField(default=0)),
                ('forecast_write_1h_tokens', models.BigIntegerField(default=0)),
                ('forecast_uncached_tokens', models.BigIntegerField(default=0)),
                ('cost_usd', models.DecimalField(blank=True, decimal_places=12, max_digits=24, null=True)),
                ('cost_without_cache_usd', models.DecimalField(blank=True, decimal_places=12, max_digits=24, null=True)),
                ('unexplained_miss', models.BooleanField(default=False)),
                ('forecast_agreed', models.BooleanField(default=False)),
                ('cache_miss_reason', models.CharField(blank=True, max_length=40)),
                ('first_changed_path', models.CharField(blank=True, max_length=1024)),
                ('compacted_tokens', models.BigIntegerField(default=0)),
                ('pruned_tokens', models.BigIntegerField(default=0)),
            ],
        ),
        migrations.AddField(
            model_name='compaction',
            name='summary_cache',
            field=models.CharField(blank=True, max_length=8),
        ),
        migrations.AddField(
            model_name='compaction',
            name='summary_cost_usd',
            field=models.DecimalField(blank=True, decimal_places=12, max_digits=24, null=True),
        ),
        migrations.AddField(
            model_name='compaction',
            name='summary_usage',
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.AddField(
            model_name='renderrecord',
            name='cache_head',
            field=models.CharField(blank=True, max_length=16),
        ),
        migrations.AddField(
            model_name='renderrecord',
            name='cache_touched',
            field=models.JSONField(blank=True, default=list),
        ),
        migrations.AddField(
            model_name='renderrecord',
            name='format',
            field=models.CharField(blank=True, max_length=24),
        ),
        migrations.AddField(
            model_name='renderrecord',
            name='model',
            field=models.CharField(blank=True, max_length=100),
        ),
        migrations.AddField(
            model_name='renderrecord',
            name='pruned_tokens',
            field=models.BigIntegerField(default=0),
        ),
        migrations.AddField(
            model_name='renderrecord',
            name='public_id',
            field=models.CharField(blank=True, max_length=32, null=True),
        ),
        migrations.AddField(
            model_name='renderrecord',
            name='system_text',
            field=models.TextField(blank=True),
        ),
        migrations.AddField(
            model_name='renderrecord',
            name='usage_forecast',
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.AddConstraint(
            model_name='renderrecord',
            constraint=models.UniqueConstraint(fields=('public_id',), name='timeline_render_public_id_uniq'),
        ),
        migrations.AddField(
            model_name='renderusage',
            name='conversation',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='usages', to='timeline_app.conversation'),
        ),
        migrations.AddField(
            model_name='renderusage',
            name='render',
            field=models.OneToOneField(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='usage', to='timeline_app.renderrecord'),
        ),
        migrations.AddField(
            model_name='renderusage',
            name='tenant',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='timeline_app.tenant'),
        ),
        migrations.AddField(
            model_name='renderusage',
            name='timeline',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='usages', to='timeline_app.timeline'),
        ),
        migrations.AddIndex(
            model_name='renderusage',
            index=models.Index(fields=['tenant', 'rendered_at'], name='timeline_usage_tenant_at_idx'),
        ),
        migrations.AddIndex(
            model_name='renderusage',
            index=models.Index(fields=['conversation', 'rendered_at'], name='timeline_usage_conv_at_idx'),
        ),
        migrations.AddConstraint(
            model_name='renderusage',
            constraint=models.UniqueConstraint(fields=('timeline', 'render_public_id'), name='timeline_usage_render_uniq'),
        ),
    ]
