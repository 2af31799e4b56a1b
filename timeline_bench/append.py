"""Append cost must not grow with the timeline: appending never rewrites or counts earlier rows.

A per-append ``COUNT(*)`` over the timeline is the bug this exists to catch, so the two sizes are
far apart (~100 vs 50,000 blocks) and the small side stays small for the whole run: its appends
are spread over a pool of ~100-block timelines instead of growing one. The two sides are measured
interleaved (one append to each, in turn), so load from anything else on the machine falls on both
alike. Runs on the configured database: SQLite by default, PostgreSQL with ``DATABASE_URL``.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

from django.db import connection

from timeline_app.domain import blocks as b
from timeline_app.domain.contributions import NewBlock
from timeline_app.models import Block, Timeline
from timeline_app.services.blocks import blocks_append
from timeline_bench.common import fill_timeline, scratch_tenant, scratch_timeline

GOAL_RATIO = 1.3
SMALL_BLOCKS = 100
LARGE_BLOCKS = 50_000
SMALL_POOL = 30


def _append_one(timeline: Timeline) -> float:
    start = time.perf_counter()
    blocks_append(
        timeline=timeline,
        blocks=[NewBlock(type=b.NOTES, author="react", text="one more progress note")],
    )
    return time.perf_counter() - start


def run(write: Callable[[str], None], *, repeat: int = 300, large_blocks: int = LARGE_BLOCKS) -> None:
    with scratch_tenant() as tenant:
        smalls = [scratch_timeline(tenant) for _ in range(SMALL_POOL)]
        for small in smalls:
            fill_timeline(small, blocks=SMALL_BLOCKS)
        large = scratch_timeline(tenant)
        fill_timeline(large, blocks=large_blocks)
        for k in range(5):
            _append_one(smalls[k % SMALL_POOL]), _append_one(large)
        small_samples, large_samples = [], []
        for k in range(repeat):
            small_samples.append(_append_one(smalls[k % SMALL_POOL]))
            large_samples.append(_append_one(large))
        small_sizes = [Block.objects.filter(timeline=small).count() for small in smalls]
        large_size = Block.objects.filter(timeline=large).count()
    small_s, large_s = statistics.median(small_samples), statistics.median(large_samples)
    ratio = large_s / small_s
    write(f"append: median cost of one append, interleaved, same run, {connection.vendor}")
    write(
        f"  small side: {SMALL_POOL} timelines of {min(small_sizes)}-{max(small_sizes)} blocks during the run"
    )
    write(f"  at ~{SMALL_BLOCKS} blocks:    {small_s * 1000:8.3f} ms")
    write(f"  at {large_size:,} blocks: {large_s * 1000:8.3f} ms")
    verdict = "ok" if ratio < GOAL_RATIO else "OVER GOAL"
    write(f"  ratio large/small:  {ratio:8.3f}  (goal < {GOAL_RATIO}: {verdict})")
