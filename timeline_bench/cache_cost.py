"""``manage.py bench cache-cost``: the billed prompt-cache cost of ``anthropic_messages`` against
the seed format (``anthropic``: the whole history as one user message with cache points), and of
``openai_responses`` for a GPT-5.6 model (explicit breakpoints) against the same requests with no
breakpoint, on one seeded simulated agent run, each request priced by the provider cache
simulators (``provider_sim.py``) and set against the ideal (every token that could have been read
from the cache was read). Each render's usage forecast is compared with the simulator's usage
(the same hit or miss, the same tokens read, written and sent within 1 %): the share that agrees.

The run (``script``): turns of 1–4 rounds, each round a fan-out of 1–6 parallel tool calls with
results of 50–2,500 tokens, a model call before every round and before the final answer, seconds
between calls; now and then the agent hides an earlier result; some turns start after a pause
longer than the cache TTL (the next render prunes old results); ``max_tokens`` small enough that
renders compact. The same script is played on two timelines through the service's own render
(``timeline_render``, with ``now`` the simulated clock), one per format. There is no background
worker in the simulation: every compaction happens inside a render (the nudge is off).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from django.test import override_settings

from compaction.summary import ExtractiveSummarizer
from timeline_app.domain import blocks as b
from timeline_app.domain.contributions import NewBlock, tool_call_blocks
from timeline_app.domain.tokens import count_text_tokens
from timeline_app.models import Compaction, Conversation, Tenant, Timeline
from timeline_app.rendering.pipeline import RenderOptions
from timeline_app.rendering.request_head import RequestHead
from timeline_app.services.blocks import blocks_append, turn_start
from timeline_app.services.hiding import blocks_hide
from timeline_app.services.render import timeline_render
from timeline_bench import provider_sim
from timeline_bench.common import scratch_tenant, scratch_timeline

FORMATS = ("anthropic", "anthropic_messages")
# The OpenAI run: a GPT-5.6 model, the context's cache TTL that of OpenAI's entries: 30 minutes,
# or 12 hours when the run's TTL is an hour or more (``--ttl 3600``).
OPENAI_FORMAT = "openai_responses"
OPENAI_MODEL = "gpt-5.6-sol"
OPENAI_TTL_SECONDS = 1800
OPENAI_LONG_TTL_SECONDS = 43_200
# A system prompt of about 1,500 tokens (instructions and tool descriptions, as agents have).
SYSTEM = "You are a research agent. Use the tools, cite the sources you read, keep answers short. " * 90
WORDS = ("alpha", "beta", "gamma", "delta", "port", "hotel", "price", "route", "train", "ferry", "EUR")
MAX_TOKENS = 60_000
# Turns a TTL prune keeps whole (the default, 6, is more than a compacted window of this run holds).
KEEP_TURNS = 2
START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
OPENAI_GOAL = 1.03


@dataclass(frozen=True)
class Step:
    """``render`` (a model call at ``t`` seconds), ``turn``, ``blocks`` (appended) or ``hide``."""

    kind: str
    t: float
    turn_id: str = ""
    text: str = ""
    blocks: tuple[NewBlock, ...] = ()
    path: str = ""


def _result_text(rng: random.Random, tokens: int) -> str:
    return " ".join(rng.choice(WORDS) + str(rng.randint(0, 99)) for _ in range(tokens // 2))


def script(seed: int, *, turns: int) -> list[Step]:
    """The simulated agent run: what is appended, hidden and rendered, and when."""
    rng = random.Random(seed)
    steps: list[Step] = []
    t = 0.0
    results: list[str] = []
    for turn in range(turns):
        t += rng.uniform(400, 1200) if turn and rng.random() < 0.25 else rng.uniform(20, 120)
        turn_id = f"turn_{turn}"
        steps.append(Step("turn", t, turn_id=turn_id, text=f"Task {turn}: find and compare the options."))
        for round_ in range(rng.randint(1, 4)):
            steps.append(Step("render", t))
            t += rng.uniform(3, 20)
            rows: list[NewBlock] = []
            for call in range(rng.randint(1, 6)):
                call_id = f"tc_{turn}_{round_}_{call}"
                rows += tool_call_blocks(
                    turn_id=turn_id,
                    tool_call_id=call_id,
                    tool_id=rng.choice(["web_tools.web_search", "web_tools.fetch", "fs.read"]),
                    params={"q": f"query {turn} {round_} {call}"},
                    result=_result_text(rng, rng.randint(50, 2500)),
                    note=f"Looking up part {call} of step {round_}." if call == 0 else None,
                    result_mime="text/plain",
                )
                results.append(f"tc:{turn_id}.{call_id}.result")
            t += rng.uniform(1, 30)  # the tools run
            steps.append(Step("blocks", t, blocks=tuple(rows)))
            if len(results) > 3 and rng.random() < 0.3:
                steps.append(Step("hide", t, path=rng.choice(results[:-2])))
        steps.append(Step("render", t))
        t += rng.uniform(3, 20)
        answer = NewBlock(
            type=b.ASSISTANT_COMPLETION, author="assistant", turn_id=turn_id, text="Done: " * 20
        )
        steps.append(Step("blocks", t, blocks=(answer,)))
    return steps


@dataclass
class Played:
    requests: list[tuple[float, dict[str, Any]]] = field(default_factory=list)
    # Per render: the forecast's read, written and input tokens.
    forecasts: list[tuple[int, int, int]] = field(default_factory=list)
    compactions: int = 0
    prunes: int = 0
    hides: int = 0


def _timeline(tenant: Tenant, max_tokens: int, ttl_seconds: int) -> Timeline:
    timeline = scratch_timeline(tenant)
    Conversation.objects.filter(pk=timeline.conversation_id).update(
        settings={
            "max_tokens": max_tokens,
            "cache_ttl_seconds": ttl_seconds,
            "ttl_keep_recent_turns": KEEP_TURNS,
        }
    )
    return Timeline.objects.select_related("conversation").get(pk=timeline.pk)


def _ts(t: float) -> str:
    return (START + timedelta(seconds=t)).isoformat().replace("+00:00", "Z")


def _stamped(rows: tuple[NewBlock, ...], t: float) -> list[NewBlock]:
    return [replace(row, ts=_ts(t)) for row in rows]


def play(
    steps: list[Step], *, format: str, tenant: Tenant, max_tokens: int, ttl_seconds: int, model: str = ""
) -> Played:
    """The script on a fresh timeline, rendered in ``format`` for ``model``: the requests the agent
    sends."""
    timeline = _timeline(tenant, max_tokens, ttl_seconds)
    played = Played()
    system_tokens = count_text_tokens(SYSTEM)
    native = format != "anthropic"
    options = RenderOptions(format=format, system_text=SYSTEM if native else "")  # type: ignore[arg-type]
    for step in steps:
        now = START + timedelta(seconds=step.t)
        if step.kind == "turn":
            turn_start(timeline=timeline, prompt=step.text, turn_id=step.turn_id, ts=_ts(step.t))
        elif step.kind == "blocks":
            blocks_append(timeline=timeline, blocks=_stamped(step.blocks, step.t))
        elif step.kind == "hide":
            blocks_hide(
                timeline=timeline, path=step.path, replacement_text=f"[hidden by the agent: {step.path}]"
            )
            played.hides += 1
        else:
            outcome = timeline_render(
                timeline=timeline,
                options=options,
                now=now,
                head=RequestHead(system_tokens=system_tokens, model=model),
                summarizer=ExtractiveSummarizer(),
            )
            timeline.refresh_from_db()
            if outcome.compaction is not None and outcome.compaction.status == Compaction.Outcome.APPLIED:
                played.compactions += 1
            played.prunes += outcome.pruning_status == "pruned"
            rendered = outcome.rendered
            if native:
                request = dict(rendered.request or {})
            else:  # the seed format: the README's call
                request = {"system": SYSTEM, "messages": [{"role": "user", "content": rendered.blocks}]}
            played.requests.append((step.t, request))
            forecast = outcome.forecast.forecast if outcome.forecast is not None else None
            played.forecasts.append(
                (
                    forecast.cache_read_input_tokens,
                    forecast.cache_creation_input_tokens,
                    forecast.input_tokens,
                )
                if forecast is not None
                else (0, 0, 0)
            )
    return played


@dataclass(frozen=True)
class FormatCost:
    format: str
    requests: int
    prompt_tokens: int
    billed: float
    ideal: float
    read: int
    written: int
    compactions: int
    prunes: int
    hides: int
    # Renders whose usage forecast agrees with the simulator (:func:`agrees`).
    agreed: int = 0
    # OpenAI: the same requests without any breakpoint (the API's one implicit breakpoint).
    billed_without_breakpoints: float | None = None

    @property
    def ratio(self) -> float:
        return self.billed / self.ideal if self.ideal else 1.0

    @property
    def agreement(self) -> float:
        return self.agreed / self.requests if self.requests else 1.0


def agrees(forecast: tuple[int, int, int], simulated: tuple[int, int, int]) -> bool:
    """The same hit or miss, and the same tokens read, written and sent (within 1 % of the
    simulator's each): both count the request's blocks with ``rendering/usage/request_tokens.py``
    (the seed format's stored blocks are its request's text blocks), so they differ only where
    they read or write at different places."""
    if (forecast[0] > 0) != (simulated[0] > 0):
        return False
    return all(
        abs(promised - given) <= given / 100 for promised, given in zip(forecast, simulated, strict=True)
    )


def _read(usage: dict[str, Any]) -> tuple[int, int, int]:
    """Read, written and every input token of a simulated usage object."""
    if "input_tokens_details" in usage:
        details = usage["input_tokens_details"]
        return int(details["cached_tokens"]), int(details["cache_write_tokens"]), int(usage["input_tokens"])
    read, written = int(usage["cache_read_input_tokens"]), int(usage["cache_creation_input_tokens"])
    return read, written, read + written + int(usage["input_tokens"])


def measure(
    *, seed: int = 0, turns: int = 30, max_tokens: int = MAX_TOKENS, ttl_seconds: int = 300
) -> list[FormatCost]:
    steps = script(seed, turns=turns)
    out: list[FormatCost] = []
    # No background worker in the simulation: compactions happen inside the renders only.
    with override_settings(CELERY_TASK_ALWAYS_EAGER=True), scratch_tenant() as tenant:
        for fmt in FORMATS:
            played = play(steps, format=fmt, tenant=tenant, max_tokens=max_tokens, ttl_seconds=ttl_seconds)
            usage = provider_sim.simulate(played.requests)
            ideal = provider_sim.ideal(played.requests, ttl_seconds=ttl_seconds)
            out.append(_cost(fmt, played, usage, ideal, billed=sum(provider_sim.cost(u) for u in usage)))
        openai_ttl = OPENAI_LONG_TTL_SECONDS if ttl_seconds >= 3600 else OPENAI_TTL_SECONDS
        played = play(
            steps,
            format=OPENAI_FORMAT,
            tenant=tenant,
            max_tokens=max_tokens,
            ttl_seconds=openai_ttl,
            model=OPENAI_MODEL,
        )
        usage = provider_sim.simulate_openai(played.requests)
        bare = provider_sim.simulate_openai(
            [(t, provider_sim.without_breakpoints(request)) for t, request in played.requests]
        )
        ideal = provider_sim.ideal_openai(played.requests, ttl_seconds=openai_ttl)
        cost = _cost(
            f"{OPENAI_FORMAT} ({OPENAI_MODEL})",
            played,
            usage,
            ideal,
            billed=sum(provider_sim.openai_cost(u) for u in usage),
        )
        out.append(replace(cost, billed_without_breakpoints=sum(provider_sim.openai_cost(u) for u in bare)))
    return out


def _cost(
    fmt: str, played: Played, usage: list[dict[str, Any]], ideal: list[float], *, billed: float
) -> FormatCost:
    reads = [_read(u) for u in usage]
    prompt = sum(
        u["input_tokens"] + u["cache_creation_input_tokens"] + u["cache_read_input_tokens"]
        if "cache_creation_input_tokens" in u
        else u["input_tokens"]
        for u in usage
    )
    written = sum(
        u["cache_creation_input_tokens"]
        if "cache_creation_input_tokens" in u
        else u["input_tokens_details"]["cache_write_tokens"]
        for u in usage
    )
    return FormatCost(
        format=fmt,
        requests=len(played.requests),
        prompt_tokens=prompt,
        billed=billed,
        ideal=sum(ideal),
        read=sum(read for read, _, _ in reads),
        written=written,
        compactions=played.compactions,
        prunes=played.prunes,
        hides=played.hides,
        agreed=sum(
            1 for forecast, given in zip(played.forecasts, reads, strict=True) if agrees(forecast, given)
        ),
    )


def run(
    write: Callable[[str], None],
    *,
    seed: int = 0,
    turns: int = 30,
    max_tokens: int = MAX_TOKENS,
    ttl_seconds: int = 300,
) -> list[FormatCost]:
    costs = measure(seed=seed, turns=turns, max_tokens=max_tokens, ttl_seconds=ttl_seconds)
    first = costs[0]
    write(
        f"bench cache-cost: seed {seed}, {turns} turns, {first.requests} model calls, max_tokens {max_tokens:,}, "
        f"cache TTL {ttl_seconds} s; {first.compactions} compactions, {first.prunes} TTL prunes, "
        f"{first.hides} hides (prices in base input tokens: write 1.25x/2x, read 0.1x)"
    )
    for cost in costs:
        write(
            f"  {cost.format:<30} prompt {cost.prompt_tokens:>10,}  read {cost.read:>10,}  written {cost.written:>9,}  "
            f"billed {cost.billed:>12,.0f}  ideal {cost.ideal:>12,.0f}  ratio {cost.ratio:.3f}  "
            f"forecast agrees {cost.agreed}/{cost.requests} ({100 * cost.agreement:.1f} %)"
        )
    seed_ratio, native_ratio = costs[0].ratio, costs[1].ratio
    verdict = "ok" if native_ratio <= seed_ratio else "WORSE"
    write(f"  anthropic_messages ratio {native_ratio:.3f} vs seed format {seed_ratio:.3f}: {verdict}")
    openai = costs[2]
    bare = openai.billed_without_breakpoints or 0.0
    verdict = "ok" if openai.ratio <= OPENAI_GOAL and openai.billed <= bare else "NOT met"
    write(
        f"  {openai.format} ratio {openai.ratio:.3f} (goal <= {OPENAI_GOAL}); the same requests without "
        f"breakpoints billed {bare:,.0f} (ratio {bare / openai.ideal if openai.ideal else 1.0:.3f}): {verdict}"
    )
    return costs
