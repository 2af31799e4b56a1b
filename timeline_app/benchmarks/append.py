"""Append cost must not grow with the timeline: appending never rewrites earlier rows.

The two timelines are measured interleaved (one append to each, in turn), so load from anything
else on the machine falls on both alike and the ratio stays meaningful.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

from timeline_app.benchmarks.common import fill_timeline, scratch_tenant, scratch_timeline
from timeline_app.models import Timeline
from timeline_app.rendering import blocks as b
from timeline_app.rendering.contributions import NewBlock
from timeline_app.services.blocks import blocks_append

GOAL_RATIO = 1.3


def _append_one(timeline: Timeline) -> float:
    start = time.perf_counter()
    blocks_append(
        timeline=timeline,
        blocks=[NewBlock(type=b.NOTES, author="react", text="one more progress note")],
    )
    return time.perf_counter() - start


def run(write: Callable[[str], None], *, repeat: int = 300) -> None:
    with scratch_tenant() as tenant:
        small = scratch_timeline(tenant)
        large = scratch_timeline(tenant)
        fill_timeline(small, blocks=100)
        fill_timeline(large, blocks=10_000)
        for _ in range(5):
            _append_one(small), _append_one(large)
        small_samples, large_samples = [], []
        for _ in range(repeat):
            small_samples.append(_append_one(small))
            large_samples.append(_append_one(large))
    small_s, large_s = statistics.median(small_samples), statistics.median(large_samples)
    ratio = large_s / small_s
    write("append: median cost of one append, interleaved, same run and database")
    write(f"  at ~100 blocks:    {small_s * 1000:8.3f} ms")
    write(f"  at ~10,000 blocks: {large_s * 1000:8.3f} ms")
    verdict = "ok" if ratio < GOAL_RATIO else "OVER GOAL"
    write(f"  ratio 10k/100:     {ratio:8.3f}  (goal < {GOAL_RATIO}: {verdict})")
