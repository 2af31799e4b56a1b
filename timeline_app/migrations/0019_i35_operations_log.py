"""Issue 35: the operations log of a context (``Operation``, tenant-owned: row-level security
forced like every other table, migration 0016), and a compaction's threshold (the number that,
with its tokens before and after, decided a rejection or a skip). A new table and a nullable
column: no rewrite, no scan."""

import django.db.models.deletion
import timeline_app.models.operations
from django.db import migrations, models

from timeline_app.tenancy import RowLevelSecurity


class Migration(migrations.Migration):

    dependencies = [
        ('timeline_app', '0018_i35_compaction_revert'),
    ]

    operations = [
        migrations.AddField(
            model_name='compaction',
            name='threshold_tokens',
            field=models.IntegerField(blank=True, null=True),
        ),
        migrations.CreateModel(
            name='Operation',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('public_id', models.CharField(default=timeline_app.models.operations.new_operation_id, max_length=32)),
                ('at', models.DateTimeField()),
                ('kind', models.CharField(choices=[('compaction_applied', 'compaction_applied'), ('compaction_rejected', 'compaction_rejected'), ('compaction_skipped', 'compaction_skipped'), ('compaction_failed', 'compaction_failed'), ('compaction_reverted', 'compaction_reverted'), ('ttl_pruned', 'ttl_pruned'), ('hidden', 'hidden'), ('unhidden', 'unhidden'), ('imported', 'imported'), ('settings_changed', 'settings_changed'), ('context_created', 'context_created'), ('context_cleared', 'context_cleared'), ('context_branched', 'context_branched'), ('messages_erased', 'messages_erased')], max_length=32)),
                ('actor', models.CharField(max_length=150)),
                ('tokens_before', models.BigIntegerField(blank=True, null=True)),
                ('tokens_after', models.BigIntegerField(blank=True, null=True)),
                ('seq_ranges', models.JSONField(blank=True, default=list)),
                ('paths', models.JSONField(blank=True, default=list)),
                ('compaction_id', models.CharField(blank=True, max_length=32)),
                ('model', models.CharField(blank=True, max_length=100)),
                ('cost_usd', models.DecimalField(blank=True, decimal_places=12, max_digits=24, null=True)),
                ('details', models.JSONField(blank=True, default=dict)),
                ('conversation', models.ForeignKey(db_constraint=False, db_index=False, editable=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='timeline_app.conversation')),
                ('tenant', models.ForeignKey(db_constraint=False, db_index=False, editable=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='timeline_app.tenant')),
                ('timeline', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='operations', to='timeline_app.timeline')),
            ],
            options={
                'indexes': [models.Index(fields=['timeline', '-id'], name='timeline_op_recent_idx')],
                'constraints': [models.CheckConstraint(condition=models.Q(('kind__in', ['compaction_applied', 'compaction_rejected', 'compaction_skipped', 'compaction_failed', 'compaction_reverted', 'ttl_pruned', 'hidden', 'unhidden', 'imported', 'settings_changed', 'context_created', 'context_cleared', 'context_branched', 'messages_erased'])), name='timeline_operation_kind_valid'), models.UniqueConstraint(fields=('timeline', 'public_id', 'conversation'), name='timeline_op_public_id_conv_uniq')],
            },
        ),
        RowLevelSecurity("timeline_app_operation"),
    ]
