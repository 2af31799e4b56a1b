"""Render records keep their seqs as zlib-compressed deltas and no longer keep cumulative tokens
(where two prefixes agree their tokens agree: the current render has them). Repacks old rows."""

import struct
import zlib

from django.db import migrations


def repack_seqs(apps, schema_editor):
    RenderRecord = apps.get_model("timeline_app", "RenderRecord")
    for pk, raw in RenderRecord.objects.values_list("pk", "segment_seqs").iterator(chunk_size=100):
        raw = bytes(raw or b"")
        if not raw:
            continue
        seqs = struct.unpack(f"<{len(raw) // 8}q", raw[: len(raw) // 8 * 8])
        deltas = [seqs[0], *(after - before for before, after in zip(seqs, seqs[1:]))] if seqs else []
        packed = zlib.compress(struct.pack(f"<{len(deltas)}q", *deltas), 1) if deltas else b""
        RenderRecord.objects.filter(pk=pk).update(segment_seqs=packed)


class Migration(migrations.Migration):
    dependencies = [
        ("timeline_app", "0006_render_history"),
    ]

    operations = [
        migrations.RemoveField(model_name="renderrecord", name="segment_tokens"),
        migrations.RunPython(repack_seqs, migrations.RunPython.noop),
    ]
