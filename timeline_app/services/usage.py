"""The cost model in the shell: each render's usage forecast, and the usage a client reports.

The rules are pure (``rendering/usage/``); this module reads the settings (price table, minimum
cacheable lengths), loads the provider cache the forecast starts from, and writes the rows.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction

from timeline_app import metrics, selectors
from timeline_app.errors import Conflict, InvalidInput, NotFound
from timeline_app.models import RenderRecord, RenderUsage, Timeline
from timeline_app.rendering.pipeline import Rendered
from timeline_app.rendering.usage.forecast import (
    ANTHROPIC_MIN_TOKENS,
    GEMINI_MIN_TOKENS,
    CacheRules,
    CacheState,
    Forecast,
    forecast_usage,
)
from timeline_app.rendering.usage.pricing import Price, call_cost, cost_without_cache, price_for, price_table
from timeline_app.rendering.usage.reported import (
    CACHE_MISS_REASONS,
    UsageError,
    kept_usage,
    read_usage,
)
from timeline_app.rendering.usage.requests import (
    format_provider,
    native_anthropic_request,
    native_openai_request,
    rendered_request,
)
from timeline_app.services.model_lifecycle import warn_if_retired

# A forecast read the provider gave less than this share of is a miss (token counts are estimates).
AGREEMENT = Decimal("0.99")


def cache_rules() -> CacheRules:
    return CacheRules(
        anthropic_min_tokens={**ANTHROPIC_MIN_TOKENS, **settings.TIMELINE_CACHE_MIN_TOKENS},
        openai_retention_seconds=settings.TIMELINE_OPENAI_CACHE_RETENTION_SECONDS,
        gemini_min_tokens={**GEMINI_MIN_TOKENS, **settings.TIMELINE_CACHE_MIN_TOKENS},
    )


def prices() -> dict[str, Price]:
    return price_table(settings.TIMELINE_PRICES)


def cache_breakpoint_ttls(model: str) -> tuple[str, ...]:
    """The explicit cache TTLs of ``model`` when it takes OpenAI cache breakpoints (GPT-5.6 and
    later, as the price table says); empty for every other or unknown model."""
    priced = price_for(prices(), model) if model else None
    return priced[1].cache_ttls if priced is not None else ()


@dataclass(frozen=True)
class RenderForecast:
    """What a recorded render stores of its forecast (``RenderRecord`` columns)."""

    forecast: Forecast
    cache_head: str
    cache_touched: list[list[str]]

    def as_dict(self) -> dict[str, Any]:
        return self.forecast.as_dict()


def render_forecast(
    *,
    timeline: Timeline,
    rendered: Rendered,
    format_name: str,
    model: str,
    head_tokens: int,
    now: datetime,
    state: CacheState | None = None,
) -> RenderForecast:
    """The usage forecast of a render about to be recorded, from this context's recent renders
    (``state``: read already, with the previous render: ``selectors.render_memory``)."""
    rules = cache_rules()
    provider = format_provider(format_name)
    model = model or settings.TIMELINE_FORECAST_MODEL
    input_tokens = rendered.tokens["total"] + (head_tokens - rendered.tokens["system"])
    native = None  # a native request with markers is read as its provider reads it
    if rendered.request is not None and format_name == "anthropic_messages":
        native = native_anthropic_request
    elif rendered.request is not None and "prompt_cache_options" in rendered.request:
        native = native_openai_request  # GPT-5.6 explicit breakpoints
    if native is not None and rendered.request is not None:
        system_tokens = rendered.tokens["system"]
        if rendered.request_tokens is not None:  # the request's own count (request_tokens.py)
            input_tokens = head_tokens - system_tokens + rendered.request_tokens
        request = native(
            model=model,
            prefix=rendered.prefix,
            request=rendered.request,
            marked_seqs=rendered.marked_seqs,
            head_tokens=head_tokens,
            input_tokens=input_tokens,
            through=rendered.request_through,
            system_tokens=system_tokens,
        )
    else:
        request = rendered_request(
            provider=provider,
            model=model,
            prefix=rendered.prefix,
            parts=rendered.blocks,
            cache_points=rendered.cache_points,
            head_tokens=head_tokens,
            input_tokens=input_tokens,
        )
    if state is None:
        state = selectors.cache_state(
            timeline=timeline,
            provider=provider,
            now=now,
            retention_seconds=rules.retention_seconds(provider),
            explicit=request.explicit,
        )
    forecast = forecast_usage(request=request, state=state, now=now, rules=rules)
    return RenderForecast(
        forecast=forecast,
        cache_head=rendered.prefix.seed.hex() if head_tokens > 0 else "",
        cache_touched=[[digest.hex(), expires.isoformat()] for digest, expires in forecast.touched],
    )


def _usage_body(body: Mapping[str, Any]) -> tuple[str, str, Any]:
    model = body.get("model")
    if not isinstance(model, str) or not 1 <= len(model) <= 100:
        raise InvalidInput("model must be the model name the call used", details={"model": "required"})
    reason = body.get("cache_miss_reason")
    if reason is not None and reason not in CACHE_MISS_REASONS:
        raise InvalidInput(
            "cache_miss_reason must be one of Anthropic's reasons",
            details={"cache_miss_reason": list(CACHE_MISS_REASONS)},
        )
    return model, reason or "", body.get("usage")


def render_usage_report(
    *, timeline: Timeline, render_id: str, body: Mapping[str, Any], now: datetime, durable: bool = True
) -> tuple[RenderUsage, bool]:
    """Record what the provider billed for one render: ``(row, created)``. The same report again
    answers the stored row; a different one for the same render is a conflict. ``durable=False``:
    part of the caller's transaction (a reply stored with its usage), the row saved in a savepoint.

    What is stored of the report (``reported``, what a replay must equal) is the model, the reason
    and only the part of the usage object the cost model reads (``kept_usage``, Gemini's however
    its names were spelled): extra SDK keys are ignored, neither stored nor compared."""
    model, reason, raw_usage = _usage_body(body)
    warn_if_retired(model, where="usage report")
    try:
        usage = read_usage(raw_usage)
    except UsageError as exc:
        raise InvalidInput(str(exc), details={"usage": exc.field}) from exc
    reported = _reported(body)
    existing = selectors.usage_for_render(timeline=timeline, render_id=render_id)
    if existing is not None:
        return _replayed(existing, reported), False
    render = selectors.render_for_usage(timeline=timeline, render_id=render_id)
    if render is None:
        raise NotFound("no such render in this context", details={"render_id": render_id})
    priced = price_for(prices(), model)
    if priced is not None and priced[1].provider != usage.provider:
        raise InvalidInput(
            f"model {model} is a {priced[1].provider} model but the usage object is {usage.provider}'s",
            details={"model": model, "usage": usage.provider},
        )
    row = _usage_row(timeline=timeline, render=render, now=now, model=model, reason=reason, reported=reported)
    tokens = usage.tokens
    row.provider = usage.provider
    row.uncached_input_tokens = tokens.uncached_input
    row.cache_read_tokens = tokens.cache_read
    row.cache_write_5m_tokens = tokens.cache_write_5m
    row.cache_write_1h_tokens = tokens.cache_write_1h
    row.output_tokens = tokens.output
    if priced is not None:
        row.priced_model = priced[0]
        row.cost_usd = call_cost(priced[1], tokens)
        row.cost_without_cache_usd = cost_without_cache(priced[1], tokens)
    promised = row.forecast_read_tokens
    row.unexplained_miss = promised > 0 and tokens.cache_read < promised * AGREEMENT
    row.forecast_agreed = (promised > 0) == (tokens.cache_read > 0) and abs(promised - tokens.cache_read) <= (
        tokens.cache_read / 100
    )
    try:
        with transaction.atomic(durable=durable):
            row.save()
    except IntegrityError:  # a concurrent report of the same render won
        existing = selectors.usage_for_render(timeline=timeline, render_id=render_id)
        if existing is None:
            raise
        return _replayed(existing, reported), False
    metrics.observe_usage(
        model=row.priced_model,
        tokens={
            "uncached": tokens.uncached_input,
            "cache_read": tokens.cache_read,
            "cache_write_5m": tokens.cache_write_5m,
            "cache_write_1h": tokens.cache_write_1h,
            "output": tokens.output,
        },
        cost=row.cost_usd,
    )
    return row, True


def _reported(body: Mapping[str, Any]) -> dict[str, Any]:
    """What a report stores and a replay must equal: ``model``, ``cache_miss_reason`` (when given)
    and the usage object's ``kept_usage`` (a report stored before extra keys were dropped compares
    by its kept part too)."""
    reported = {key: body[key] for key in ("model", "cache_miss_reason") if key in body}
    if isinstance(body.get("usage"), Mapping):
        reported["usage"] = kept_usage(body["usage"])
    return reported


def _replayed(existing: RenderUsage, reported: dict[str, Any]) -> RenderUsage:
    if _reported(existing.reported) != reported:
        raise Conflict(
            "this render's usage was already reported with other figures",
            details={"render_id": existing.render_public_id},
        )
    return existing


def _usage_row(
    *,
    timeline: Timeline,
    render: RenderRecord,
    now: datetime,
    model: str,
    reason: str,
    reported: dict[str, Any],
) -> RenderUsage:
    forecast = render.usage_forecast or {}
    by_ttl = forecast.get("cache_creation") or {}
    compaction = render.compaction
    return RenderUsage(
        tenant_id=timeline.conversation.tenant_id,
        conversation_id=timeline.conversation_id,
        timeline=timeline,
        render=render,
        render_public_id=render.public_id or "",
        rendered_at=render.rendered_at,
        reported_at=now,
        model=model,
        reported=reported,
        forecast_read_tokens=int(forecast.get("cache_read_input_tokens", 0)),
        forecast_write_5m_tokens=int(by_ttl.get("ephemeral_5m_input_tokens", 0)),
        forecast_write_1h_tokens=int(by_ttl.get("ephemeral_1h_input_tokens", 0)),
        forecast_uncached_tokens=int(forecast.get("uncached_input_tokens", 0)),
        cache_miss_reason=reason,
        first_changed_path=render.first_changed_path,
        compacted_tokens=compaction.compacted_tokens if compaction is not None else 0,
        pruned_tokens=render.pruned_tokens,
    )


def _dollars(value: Decimal) -> str:
    return format(value.normalize(), "f") if value else "0"


def usage_summary(totals: Mapping[str, Any]) -> dict[str, Any]:
    """Totals with what they mean: dollars saved, the cache-read share of input, forecast accuracy."""
    input_tokens = sum(
        int(totals[key])
        for key in (
            "uncached_input_tokens",
            "cache_read_tokens",
            "cache_write_5m_tokens",
            "cache_write_1h_tokens",
        )
    )
    cost = Decimal(totals["cost_usd"])
    without = Decimal(totals["cost_without_cache_usd"])
    renders = int(totals["renders"])
    return {
        "renders": renders,
        "input_tokens": input_tokens,
        "tokens": {
            "uncached_input": int(totals["uncached_input_tokens"]),
            "cache_read": int(totals["cache_read_tokens"]),
            "cache_write_5m": int(totals["cache_write_5m_tokens"]),
            "cache_write_1h": int(totals["cache_write_1h_tokens"]),
            "output": int(totals["output_tokens"]),
        },
        "cost_usd": _dollars(cost),
        "cost_without_cache_usd": _dollars(without),
        "saved_usd": _dollars(without - cost),
        "unpriced_renders": int(totals["unpriced_renders"]),
        "cache_read_share": round(int(totals["cache_read_tokens"]) / input_tokens, 4)
        if input_tokens
        else 0.0,
        "forecast_read_tokens": int(totals["forecast_read_tokens"]),
        "forecast_accuracy": round(int(totals["forecast_agreed"]) / renders, 4) if renders else None,
        "unexplained_misses": int(totals["unexplained_misses"]),
        "compacted_tokens": int(totals["compacted_tokens"]),
        "pruned_tokens": int(totals["pruned_tokens"]),
    }
