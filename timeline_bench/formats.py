"""``manage.py bench formats --timelines N``: render N random timelines (``timelines.py``: every
state a history can be in) in each native format (the OpenAI ones for a GPT-5.6 model, with
explicit cache breakpoints, half of the time); print the violations of the providers' rules
(``rendering/native/validate.py``) and of the SDKs' request types, and the render time per format.
Every other timeline holds thinking blocks of all three providers (the provider switch: each
format keeps only its own opaque parts, the others' readable text). Goal: 0 violations."""

from __future__ import annotations

import random
import statistics
import time
from collections import Counter
from collections.abc import Callable

from timeline_app.domain.settings import RenderSettings
from timeline_app.rendering.native import NATIVE_FORMATS
from timeline_app.rendering.native.validate import violations
from timeline_app.rendering.pipeline import RenderOptions, render_window
from timeline_bench.timelines import random_timeline, with_thinking


def run(write: Callable[[str], None], *, timelines: int = 1_000, seed: int = 0, sdk_every: int = 10) -> None:
    try:
        from timeline_bench.sdk_types import sdk_type_errors
    except ImportError:  # the SDKs are a dev extra (openai) or missing
        sdk_type_errors = None  # type: ignore[assignment]
    seconds: dict[str, list[float]] = {f: [] for f in NATIVE_FORMATS}
    broken: dict[str, int] = dict.fromkeys(NATIVE_FORMATS, 0)
    rejected: dict[str, int] = dict.fromkeys(NATIVE_FORMATS, 0)
    # How the renders came out: GPT-5.6 breakpoints carried, endings (the continue message, prefill).
    marked: dict[str, int] = dict.fromkeys(NATIVE_FORMATS, 0)
    endings: dict[str, Counter[str]] = {f: Counter() for f in NATIVE_FORMATS}
    checked = 0
    first: list[str] = []
    blocks_total = 0
    for n in range(timelines):
        rng = random.Random(seed + n)
        blocks = random_timeline(rng)
        if n % 2:  # the provider switch: thinking of all three providers in one history
            blocks = with_thinking(random.Random((seed + n) ^ 0x5EED), blocks)
        blocks_total += len(blocks)
        settings = RenderSettings(
            cache_ttl_seconds=rng.choice([300, 3600]), cache_min_tokens=rng.choice([0, 1024])
        )
        sdk = sdk_type_errors is not None and sdk_every > 0 and n % sdk_every == 0
        checked += sdk
        for fmt in NATIVE_FORMATS:
            options = RenderOptions(
                format=fmt,  # type: ignore[arg-type]
                include_announce=rng.random() < 0.3,
                announce=("budget: 3 calls",),
                system_text=rng.choice(["", "You are an agent. " * 50]),
                prompt_cache_key="tl-bench",
                prefill=rng.random() < 0.1,
                # A GPT-5.6 model (explicit cache breakpoints) half of the time.
                cache_breakpoint_ttls=rng.choice([(), ("30m", "12h")]),
            )
            start = time.perf_counter()
            rendered = render_window(
                blocks, settings=settings, options=options, system_tokens=rng.randint(0, 3000)
            )
            seconds[fmt].append(time.perf_counter() - start)
            request = rendered.request or {}
            marked[fmt] += "prompt_cache_options" in request
            endings[fmt][rendered.ending or ""] += 1
            found = violations(fmt, request, prefill=options.prefill)
            if found:
                broken[fmt] += 1
                if len(first) < 5:
                    first.append(f"timeline {seed + n} {fmt}: {found[0]}")
            if sdk and sdk_type_errors is not None and sdk_type_errors(fmt, request):
                rejected[fmt] += 1
                if len(first) < 5:
                    first.append(f"timeline {seed + n} {fmt}: rejected by the SDK request types")
    write(
        f"bench formats: {timelines:,} random timelines (seeds {seed}..{seed + timelines - 1}, "
        f"{blocks_total / max(timelines, 1):.0f} blocks on average, every other one with thinking of "
        f"the three providers); SDK types checked on {checked:,}"
        + ("" if sdk_type_errors is not None else " (SDKs not installed)")
    )
    for fmt in NATIVE_FORMATS:
        times = sorted(seconds[fmt])
        p99 = times[min(len(times) - 1, int(len(times) * 0.99))] if times else 0.0
        write(
            f"  {fmt:<20} rule violations {broken[fmt]:>5}   SDK type errors {rejected[fmt]:>5}   "
            f"render median {statistics.median(times) * 1000 if times else 0:.2f} ms, p99 {p99 * 1000:.2f} ms"
        )
        ends = ", ".join(f"{name} {count:,}" for name, count in sorted(endings[fmt].items()))
        breakpoints = f"GPT-5.6 (prompt_cache_options) {marked[fmt]:,}; " if fmt.startswith("openai") else ""
        write(f"  {'':<20} {breakpoints}ending: {ends}")
    for line in first:
        write(f"  first: {line}")
