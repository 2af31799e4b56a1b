"""Append cost must not grow with the timeline: appending never rewrites earlier rows."""

from __future__ import annotations

from collections.abc import Callable

from timeline_app import services
from timeline_app.benchmarks.common import fill_timeline, median_seconds, scratch_tenant, scratch_timeline
from timeline_app.rendering import blocks as b

GOAL_RATIO = 1.3


def run(write: Callable[[str], None], *, repeat: int = 200) -> None:
    with scratch_tenant() as tenant:
        timeline = scratch_timeline(tenant)

        def append_one() -> None:
            services.blocks_append(
                timeline=timeline,
                blocks=[services.NewBlock(type=b.NOTES, author="react", text="one more progress note")],
            )

        fill_timeline(timeline, blocks=100)
        small = median_seconds(append_one, repeat=repeat)
        fill_timeline(timeline, blocks=10_000)
        large = median_seconds(append_one, repeat=repeat)
    ratio = large / small
    write("append: median cost of one append (same run, same database)")
    write(f"  at ~100 blocks:    {small * 1000:8.3f} ms")
    write(f"  at ~10,000 blocks: {large * 1000:8.3f} ms")
    verdict = "ok" if ratio < GOAL_RATIO else "OVER GOAL"
    write(f"  ratio 10k/100:     {ratio:8.3f}  (goal < {GOAL_RATIO}: {verdict})")
