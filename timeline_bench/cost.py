"""``bench cost``: does the usage forecast agree with the provider?

A simulated agent run goes through the HTTP API (the Python client on the WSGI app, in process):
turns of tool calls with a render before every model call, a hide every fifth turn, a fan-out into
a named context every eighth, a TTL gap (11 minutes) every sixth, and compactions as the context
passes its threshold. Each render's request body (system + rendered parts, markers included) goes
to ``provider_sim.CacheSimulator``, written apart from the forecast model; its usage is
reported back (``report_usage``), and the forecast is compared with it: the same hit or miss, and
cache-read tokens within 1 %. Goal: >= 99 % of renders agree.

Compactions summarize with the Anthropic summarizer whose HTTP calls go to the same simulator, so
each summary request is billed as the provider would bill its bytes. The run is made twice: with
the summary reading the context's cached prefix (the default) and with it sending the transcript
(as before issue 23); the bench prints the compactions' input cost as a share of the session's
input cost for both (goal <= 5 %).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import httpx2
from django.core.wsgi import get_wsgi_application
from django.test import override_settings
from timeline_client import TimelineClient, UsageForecast

from compaction.summary.anthropic import AnthropicSummarizer
from timeline_app.models import Compaction, RenderUsage
from timeline_app.rendering.usage.pricing import DEFAULT_PRICES, Price, TokenCounts
from timeline_app.rendering.usage.reported import read_usage
from timeline_app.services.api_keys import api_key_create
from timeline_bench import provider_sim
from timeline_bench.common import in_process_base_url, scratch_tenant

MODEL = "claude-sonnet-5-5"
TURNS = 36
CALLS_PER_TURN = 3
SYSTEM = "You are a careful research agent. " + " ".join(
    f"Rule {i}: cite the source path of every fact you use, keep tool outputs short, never guess ids."
    for i in range(60)
)
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
GOAL = 0.99
COMPACTION_SHARE_GOAL = 0.05
# The run in progress, for the summarizer factory (TIMELINE_SUMMARIZER_CLASS) to reach.
_current: dict[str, Any] = {}


def _summary_answer(request: httpx2.Request) -> httpx2.Response:
    body = json.loads(request.content)
    run: Run = _current["run"]
    usage = run.provider_usage(body)
    usage["output_tokens"] = 400
    return httpx2.Response(
        200,
        json={
            "id": "msg_bench",
            "type": "message",
            "role": "assistant",
            "model": MODEL,
            "content": [{"type": "text", "text": "## Goals / requests\n- continue the research"}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": usage,
        },
    )


class _TranscriptOnly(AnthropicSummarizer):
    """The summarizer as before issue 23: never the cached prefix."""

    def summarize(self, **kwargs: Any) -> str:
        self.cached_prefix = None
        return super().summarize(**kwargs)


def simulated_summarizer() -> AnthropicSummarizer:
    """``TIMELINE_SUMMARIZER_CLASS`` during the run: Claude through the provider simulator."""
    kind = AnthropicSummarizer if _current.get("warm", True) else _TranscriptOnly
    return kind(
        "bench",
        MODEL,
        max_retries=0,
        http_client=httpx2.Client(transport=httpx2.MockTransport(_summary_answer)),
    )


def _input_cost(price: Price, tokens: TokenCounts) -> float:
    return float(
        tokens.uncached_input * price.input
        + tokens.cache_read * price.cache_read
        + tokens.cache_write_5m * price.cache_write_5m
        + tokens.cache_write_1h * price.cache_write_1h
    )


def _agrees(forecast: UsageForecast, usage: dict[str, Any]) -> bool:
    promised, given = int(forecast["cache_read_input_tokens"]), int(usage["cache_read_input_tokens"])
    return (promised > 0) == (given > 0) and abs(promised - given) <= given / 100


class Run:
    def __init__(self, client: TimelineClient, write: Callable[[str], None]):
        self.client = client
        self.write = write
        self.sim = provider_sim.CacheSimulator(min_tokens=provider_sim.min_tokens_for(MODEL))
        self.clock = T0
        self.results: list[tuple[str, bool, int, int]] = []

    def provider_usage(self, body: dict[str, Any]) -> dict[str, Any]:
        """What the simulated provider bills ``body`` sent now (one cache for the whole run)."""
        usage = self.sim.request((self.clock - T0).total_seconds(), body)
        usage["output_tokens"] = 300
        return usage

    def call(self, conversation: str, *, context: str = "main") -> None:
        """Render, send the exact request to the simulator, report its usage, compare."""
        rendered = self.client.render(
            conversation, context=context, system=SYSTEM, model=MODEL, now=self.clock.isoformat()
        )
        body = {
            "model": MODEL,
            "system": SYSTEM,
            "messages": [{"role": "user", "content": rendered["blocks"]}],
        }
        usage = self.provider_usage(body)
        self.client.report_usage(rendered, {"model": MODEL, "usage": usage})
        forecast, cache = rendered["usage_forecast"], rendered["cache"]
        if forecast is None or cache is None:  # both come with every render that names a model
            raise RuntimeError(
                f"the render of {conversation}/{context} has no usage forecast or cache report"
            )
        self.results.append(
            (
                f"{context}@{self.clock:%H:%M:%S} ({cache['reason']})",
                _agrees(forecast, usage),
                forecast["cache_read_input_tokens"],
                usage["cache_read_input_tokens"],
            )
        )
        self.clock += timedelta(seconds=20)

    def turn(self, conversation: str, number: int, *, context: str = "main") -> list[str]:
        turn_id = f"t{number}"
        self.client.start_turn(
            conversation, f"Request {number}: look this up.", turn_id=turn_id, context=context
        )
        results = []
        for call in range(CALLS_PER_TURN):
            self.call(conversation, context=context)
            call_id = f"tc_{number}_{call}"
            meta = {"tool_call_id": call_id, "tool_id": "search"}
            output = {"hits": [f"result {number}.{call}.{i}: " + "lorem ipsum " * 12 for i in range(8)]}
            stored = self.client.contribute(
                conversation,
                [
                    {
                        "type": "react.tool.call",
                        "author": "react",
                        "mime": "application/json",
                        "text": json.dumps({"q": f"q{number}.{call}"}),
                        "meta": meta,
                        "id": f"{call_id}.call",
                    },
                    {
                        "type": "react.tool.result",
                        "author": "tool",
                        "mime": "application/json",
                        "text": json.dumps(output),
                        "meta": meta,
                        "id": f"{call_id}.result",
                    },
                ],
                context=context,
            )
            results.append(stored[-1]["path"])
        self.call(conversation, context=context)
        self.client.contribute(
            conversation,
            [
                {
                    "type": "assistant.completion",
                    "author": "assistant",
                    "turn_id": turn_id,
                    "text": f"Answer {number}.",
                    "id": f"{turn_id}.done",
                }
            ],
            context=context,
        )
        self.clock += timedelta(seconds=30)
        return results


def session(write: Callable[[str], None], *, turns: int, warm: bool) -> dict[str, Any]:
    """One simulated agent run; its figures."""
    base_url = in_process_base_url()
    http = httpx.Client(transport=httpx.WSGITransport(app=get_wsgi_application()), base_url=base_url)
    with (
        scratch_tenant() as tenant,
        override_settings(TIMELINE_SUMMARIZER_CLASS="timeline_bench.cost.simulated_summarizer"),
    ):
        _, raw_key = api_key_create(tenant_name=tenant.name)
        client = TimelineClient(base_url, raw_key, http_client=http, retries=0)
        conversation = client.create_conversation(title="bench cost", settings={"max_tokens": 12_000})["id"]
        agent = Run(client, write)
        _current.update(run=agent, warm=warm)
        result_paths: list[str] = []
        for number in range(1, turns + 1):
            result_paths += agent.turn(conversation, number)
            if number % 5 == 0 and len(result_paths) > 6:
                client.hide(conversation, result_paths[-6], "[hidden by the agent: read it by path]")
            if number % 8 == 0:  # a fan-out: a side context explored for two turns
                for side in range(2):
                    agent.turn(conversation, 1000 * number + side, context=f"attempt_{number}")
            if number % 6 == 0:
                agent.clock += timedelta(minutes=11)
        _current.clear()
        compactions = list(
            Compaction.objects.filter(timeline__conversation__tenant=tenant, status=Compaction.Status.APPLIED)
        )
        price = DEFAULT_PRICES[MODEL]
        session_input = sum(
            _input_cost(
                price,
                TokenCounts(
                    u.uncached_input_tokens,
                    u.cache_read_tokens,
                    u.cache_write_5m_tokens,
                    u.cache_write_1h_tokens,
                    0,
                ),
            )
            for u in RenderUsage.objects.filter(tenant=tenant)
        )
        compaction_input = sum(
            _input_cost(price, read_usage(c.summary_usage).tokens) for c in compactions if c.summary_usage
        )
        return {
            "results": agent.results,
            "reported": RenderUsage.objects.filter(tenant=tenant).count(),
            "compactions": len(compactions),
            "warm_compactions": sum(1 for c in compactions if c.summary_cache == "warm"),
            "totals": client.usage(conversation),
            # The session's input: the agent's calls and the summaries'.
            "session_input": (session_input + compaction_input) / 1e6,
            "compaction_input": compaction_input / 1e6,
        }


def run(write: Callable[[str], None], *, turns: int = TURNS) -> None:
    before = session(write, turns=turns, warm=False)
    after = session(write, turns=turns, warm=True)
    results = after["results"]
    agreed = sum(1 for _, ok, _, _ in results if ok)
    count = len(results)
    write(
        f"bench cost: {count} renders ({after['reported']} reported), {after['compactions']} compactions applied"
    )
    write(
        f"  forecast agrees with the independent provider simulator on {agreed}/{count} renders "
        f"({100 * agreed / count:.1f} %; goal >= {100 * GOAL:.0f} %: {'met' if agreed >= GOAL * count else 'NOT met'})"
    )
    misses = sum(1 for _, _, _, given in results if given == 0)
    write(
        f"  the simulator read from its cache on {count - misses} renders and missed on {misses} "
        "(first renders, TTL gaps, compactions, hides, new contexts)"
    )
    for label, ok, promised, given in results:
        if not ok:
            write(f"  disagreement at {label}: forecast read {promised}, simulator read {given}")
    totals = after["totals"]
    write(
        f"  cost ${totals['cost_usd']} (without prompt caching ${totals['cost_without_cache_usd']}, "
        f"saved ${totals['saved_usd']}), cache-read share {100 * totals['cache_read_share']:.1f} %, "
        f"service-side forecast accuracy {totals['forecast_accuracy']}, unexplained misses {totals['unexplained_misses']}"
    )
    for name, figures in (
        ("before (summary sends the transcript)", before),
        ("after (summary reads the cache)", after),
    ):
        share = figures["compaction_input"] / figures["session_input"] if figures["session_input"] else 0.0
        write(
            f"  compaction input cost {name}: ${figures['compaction_input']:.4f} of ${figures['session_input']:.4f} "
            f"session input = {100 * share:.1f} % ({figures['warm_compactions']}/{figures['compactions']} warm; "
            f"goal <= {100 * COMPACTION_SHARE_GOAL:.0f} %: {'met' if share <= COMPACTION_SHARE_GOAL else 'NOT met'})"
        )
