"""Render at scale (issue 13): a warm render and the first render after the cache TTL, at 20,000
visible blocks, against a raw fetch of the same rows as plain values; all measured in one run."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from django.db import connection
from django.utils import timezone

from timeline_app import tenancy
from timeline_app.domain.settings import SETTING_RANGES
from timeline_app.models import VALUE_FIELDS, Block, Timeline
from timeline_app.rendering.pipeline import RenderOptions
from timeline_app.services.render import collector_paused, timeline_render
from timeline_bench.common import fill_timeline, median_seconds, scratch_tenant, scratch_timeline

BLOCKS = 20_000
# The largest max_tokens a conversation accepts: the 20,000 blocks (~1M tokens) never compact. A
# larger stored value no longer validates and falls back to the default (``selectors.settings``),
# which would compact the window and time a render of a few hundred blocks instead.
NEVER_COMPACTS = int(SETTING_RANGES["max_tokens"][1])


def run(write: Callable[[str], None], *, blocks: int = BLOCKS) -> None:
    # Everything under the scratch tenant's own setting, as an API request runs (row-level security:
    # the command itself widens to every tenant).
    with scratch_tenant() as tenant, tenancy.tenant_scope(tenant.pk):
        timeline = scratch_timeline(tenant)
        conversation = timeline.conversation
        # Never compacts (the window stays whole); the cache TTL is the default 300 s.
        conversation.settings = {"max_tokens": NEVER_COMPACTS}
        conversation.save()
        fill_timeline(timeline, blocks=blocks)
        options = RenderOptions(format="anthropic")
        start = timezone.now()

        def fetch() -> None:
            list(Block.objects.filter(timeline=timeline).order_by("seq").values_list(*VALUE_FIELDS))

        @collector_paused()
        def fetch_paused() -> None:
            fetch()

        def warm() -> None:
            timeline.refresh_from_db()
            outcome = timeline_render(timeline=timeline, options=options, now=start)
            assert outcome.pruning_status in ("armed", "fresh"), outcome.pruning_status
            assert not outcome.ignored_settings, outcome.ignored_settings  # else the window compacts
            assert outcome.compaction is None

        def reset() -> None:
            # Not timed: a cold cache (the clock touched long ago), no block hidden yet, and no dead
            # row versions left by the previous sample (as autovacuum leaves a table). Each block
            # keeps the replacement tokens it was written with.
            Block.objects.filter(timeline=timeline).update(
                hidden=False, replacement_text="", hidden_reason=""
            )
            Timeline.objects.filter(pk=timeline.pk).update(cache_last_touch_at=start - timedelta(hours=1))
            if connection.vendor == "postgresql":
                with connection.cursor() as cursor:
                    cursor.execute(f"VACUUM {Block._meta.db_table}")
            timeline.refresh_from_db()

        def expired() -> None:
            outcome = timeline_render(timeline=timeline, options=options, now=start)
            assert outcome.pruning_status == "pruned", outcome.pruning_status
            expired.hides = len(outcome.hidden_paths)  # type: ignore[attr-defined]

        fetch_s = median_seconds(fetch, repeat=5, warmup=1)
        fetch_paused_s = median_seconds(fetch_paused, repeat=5, warmup=1)
        warm_s = median_seconds(warm, repeat=5, warmup=1)
        expired_s = median_seconds(expired, repeat=5, warmup=1, setup=reset)
        hides = expired.hides  # type: ignore[attr-defined]

        small = scratch_timeline(tenant)
        small.conversation.settings = {"max_tokens": NEVER_COMPACTS}
        small.conversation.save()
        fill_timeline(small, blocks=500)

        def warm_small() -> None:
            small.refresh_from_db()
            outcome = timeline_render(timeline=small, options=options, now=start)
            assert not outcome.ignored_settings and outcome.compaction is None

        small_s = median_seconds(warm_small, repeat=7, warmup=1)

    write(f"render at {blocks:,} visible blocks (medians, measured now):")
    write(f"  raw fetch of the rows as values:        {fetch_s * 1000:8.1f} ms")
    write(f"  the same with the collector paused:     {fetch_paused_s * 1000:8.1f} ms  (as a render reads)")
    write(
        f"  warm render:                            {warm_s * 1000:8.1f} ms"
        f"  ({warm_s / fetch_s:.2f}x the raw fetch; goal <= 2;"
        f" {warm_s / fetch_paused_s:.2f}x the paused fetch)"
    )
    write(
        f"  first render after the cache TTL:       {expired_s * 1000:8.1f} ms"
        f"  ({expired_s / warm_s:.2f}x the warm render, {hides:,} hides stored; goal <= 1.5)"
    )
    write(
        f"  warm render at 500 blocks:              {small_s * 1000:8.1f} ms"
        f"  (20k / 500 = {warm_s / small_s:.1f}, linear is 40; goal <= 48)"
    )
