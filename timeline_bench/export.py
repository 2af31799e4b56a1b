"""Peak memory of exporting a long conversation (``conv.timeline.v1``), whole and streamed.

A conversation of ``BLOCKS`` blocks (turns of a prompt, notes, a tool result of ``RESULT_CHARS``
characters with a small ``meta`` and a completion) is stored once; then each way of answering
``GET …/timeline/`` runs in a fresh Python process, whose peak resident set size
(``ru_maxrss``) is read before and after the export:

* **whole** — what the view did before it streamed: the payload built in memory
  (``services.export.timeline_export``), serialized (``TimelineExportOut``) and rendered to bytes;
* **streamed** — the view's body now (``api.exports.export_chunks``): a server-side cursor, blocks
  serialized one by one, chunks written out (here to a byte counter).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable

from django.conf import settings

from timeline_app.domain import blocks as b
from timeline_app.models import Block, Timeline
from timeline_app.services.conversations import conversation_create
from timeline_bench.common import scratch_tenant

BLOCKS = 50_000
RESULT_CHARS = 1_000

CHILD = """
import json, os, resource, sys
import django
django.setup()
from timeline_app.api.exports import TimelineExportOut, export_chunks
from timeline_app.api.renderers import StableJSONRenderer
from timeline_app.models import Timeline
from timeline_app.services.export import timeline_export

timeline = Timeline.objects.select_related("conversation").get(pk=int(sys.argv[2]))
start = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
if sys.argv[1] == "whole":
    size = len(StableJSONRenderer().render(TimelineExportOut(timeline_export(timeline=timeline)).data))
else:
    size = sum(len(chunk) for chunk in export_chunks(timeline=timeline, window="all"))
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"start_kib": start, "peak_kib": peak, "bytes": size}))
"""


def store_conversation(tenant: object, count: int) -> Timeline:
    conversation = conversation_create(tenant=tenant, title="bench export")  # type: ignore[arg-type]
    timeline = Timeline.objects.get(conversation=conversation, name=Timeline.DEFAULT_NAME)
    kinds = (b.USER_PROMPT, b.NOTES, b.TOOL_RESULT, b.ASSISTANT_COMPLETION)
    rows = []
    for seq in range(1, count + 1):
        kind = kinds[seq % 4]
        turn = f"turn_{seq // 4}"
        result = kind == b.TOOL_RESULT
        rows.append(
            Block(
                timeline=timeline,
                seq=seq,
                type=kind,
                turn_id=turn,
                author="assistant",
                text=(f"result {seq} " * (RESULT_CHARS // 10))[:RESULT_CHARS]
                if result
                else f"block {seq} of {turn}",
                path=f"tc:{turn}.tc_{seq}.result" if result else "",
                meta={"tool_call_id": f"tc_{seq}", "tool_id": "web_tools.web_search"} if result else {},
                hidden=result and seq % 8 == 2,
                replacement_text="[result hidden]" if result and seq % 8 == 2 else "",
                tokens=RESULT_CHARS // 4 if result else 6,
            )
        )
        if len(rows) == 2_000:
            Block.objects.bulk_create(rows)
            rows = []
    Block.objects.bulk_create(rows)
    Timeline.objects.filter(pk=timeline.pk).update(next_seq=count + 1)
    return timeline


def measure(mode: str, timeline: Timeline) -> dict[str, int]:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE", "config.settings"),
    }
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(settings.BASE_DIR), env.get("PYTHONPATH", "")]))
    done = subprocess.run(
        [sys.executable, "-c", CHILD, mode, str(timeline.pk)],
        env=env,
        cwd=str(settings.BASE_DIR),
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, int] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def run(write: Callable[[str], None], *, count: int = BLOCKS) -> None:
    started = time.perf_counter()
    with scratch_tenant() as tenant:
        timeline = store_conversation(tenant, count)
        figures = {mode: measure(mode, timeline) for mode in ("whole", "streamed")}
    write(f"export: {count:,} blocks, peak RSS of a fresh process ({time.perf_counter() - started:.1f} s)")
    for mode, figure in figures.items():
        grown = (figure["peak_kib"] - figure["start_kib"]) / 1024
        write(
            f"  {mode + ':':10} peak {figure['peak_kib'] / 1024:7.1f} MiB  (+{grown:6.1f} MiB for the export)"
            f"  body {figure['bytes'] / 2**20:6.1f} MiB"
        )
    if figures["whole"]["bytes"] != figures["streamed"]["bytes"]:
        raise RuntimeError("the streamed export is not as long as the whole one")
