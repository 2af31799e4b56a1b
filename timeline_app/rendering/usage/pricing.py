"""Prices per model in exact decimals (US dollars per million tokens), and what a call cost.

Defaults are the providers' published list prices as read on ``PRICES_TAKEN_ON``; settings
override or extend them (``TIMELINE_PRICES``). Anthropic bills cache writes at 1.25× (5 minutes)
or 2× (1 hour) the input price and cache reads at 0.1×. OpenAI reads at its "cached input" price;
models before GPT-5.6 bill no cache writes, GPT-5.6 and later (``cache_ttls`` not empty: they
take explicit cache breakpoints with those TTLs) bill writes at 1.25× input. For an OpenAI model
the two write prices are those of its 30-minute (``cache_write_5m``) and 12-hour
(``cache_write_1h``) writes.
Google bills no writes for Gemini's implicit caching and reads at its cached price (0.1× input;
the prompts up to 200,000 tokens tier of the Pro models).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from .forecast import Provider, model_entry

PRICES_TAKEN_ON = "2026-11-25"
MILLION = Decimal(1_000_000)


@dataclass(frozen=True)
class Price:
    provider: Provider
    input: Decimal
    output: Decimal
    cache_write_5m: Decimal
    cache_write_1h: Decimal
    cache_read: Decimal
    # OpenAI: the TTLs of explicit cache breakpoints the model takes (empty: none, implicit only).
    cache_ttls: tuple[str, ...] = ()

    @property
    def takes_breakpoints(self) -> bool:
        return bool(self.cache_ttls)


def _price(
    provider: Provider,
    input_price: str,
    output_price: str,
    *,
    writes: tuple[str, str] = ("1", "1"),
    cached_price: str | None = None,
    ttls: tuple[str, ...] = (),
) -> Price:
    """A row from list prices: cache writes (5-minute, 1-hour slots) at ``writes`` × input, cache
    reads at ``cached_price`` when the provider lists one, else at 0.1× input."""
    base = Decimal(input_price)
    return Price(
        provider=provider,
        input=base,
        output=Decimal(output_price),
        cache_write_5m=base * Decimal(writes[0]),
        cache_write_1h=base * Decimal(writes[1]),
        cache_read=base * Decimal("0.1") if cached_price is None else Decimal(cached_price),
        cache_ttls=ttls,
    )


def _anthropic(input_price: str, output_price: str) -> Price:
    return _price("anthropic", input_price, output_price, writes=("1.25", "2"))


def _openai(input_price: str, cached_price: str, output_price: str) -> Price:
    return _price("openai", input_price, output_price, cached_price=cached_price)


def _google(input_price: str, output_price: str) -> Price:
    return _price("google", input_price, output_price)


def _openai_explicit(input_price: str, cached_price: str, output_price: str) -> Price:
    """GPT-5.6 and later: explicit breakpoints (30 minutes or 12 hours), writes at 1.25× input."""
    return _price(
        "openai",
        input_price,
        output_price,
        writes=("1.25", "1.25"),
        cached_price=cached_price,
        ttls=OPENAI_CACHE_TTLS,
    )


OPENAI_CACHE_TTLS = ("30m", "12h")

DEFAULT_PRICES: dict[str, Price] = {
    # Anthropic's current models (Sonnet 5.5 is the current Sonnet; Sonnet 5 is legacy).
    "claude-sonnet-5-5": _anthropic("2", "10"),
    "claude-sonnet-5": _anthropic("2", "10"),
    "claude-opus-5-5": _anthropic("4", "20"),
    "claude-opus-4-6": _anthropic("5", "25"),
    "claude-opus-4-5": _anthropic("5", "25"),
    "claude-opus-4-1": _anthropic("15", "75"),
    "claude-opus-4": _anthropic("15", "75"),
    "claude-sonnet-4-6": _anthropic("3", "15"),
    "claude-sonnet-4-5": _anthropic("3", "15"),
    "claude-sonnet-4": _anthropic("3", "15"),
    "claude-3-7-sonnet": _anthropic("3", "15"),
    "claude-haiku-4-5": _anthropic("1", "5"),
    "claude-3-5-haiku": _anthropic("0.80", "4"),
    "claude-3-haiku": _anthropic("0.25", "1.25"),
    # GPT-5.6 list prices as read on PRICES_TAKEN_ON (Sol's promotional price since 2026-08-21).
    "gpt-5.6-sol": _openai_explicit("4", "0.40", "20"),
    "gpt-5.6-terra": _openai_explicit("2", "0.20", "12"),
    "gpt-5.6-luna": _openai_explicit("0.20", "0.02", "1.20"),
    "gpt-5.5": _openai("5", "0.50", "30"),
    "gpt-5.4": _openai("2.50", "0.25", "15"),
    "gpt-5.4-mini": _openai("0.75", "0.075", "4.50"),
    "gpt-5": _openai("1.25", "0.125", "10"),
    "gpt-5-mini": _openai("0.25", "0.025", "2"),
    "gpt-5-nano": _openai("0.05", "0.005", "0.40"),
    "gpt-4.1": _openai("2", "0.50", "8"),
    "gpt-4.1-mini": _openai("0.40", "0.10", "1.60"),
    "gpt-4.1-nano": _openai("0.10", "0.025", "0.40"),
    "gpt-4o": _openai("2.50", "1.25", "10"),
    "gpt-4o-mini": _openai("0.15", "0.075", "0.60"),
    "gemini-3-pro": _google("2", "12"),
    "gemini-3-flash": _google("0.50", "3"),
    "gemini-2.5-pro": _google("1.25", "10"),
    "gemini-2.5-flash": _google("0.30", "2.50"),
    "gemini-2.5-flash-lite": _google("0.10", "0.40"),
}

# Models the providers retire, with their end-of-life date (the anthropic SDK's deprecation table
# as installed: ``anthropic._data.deprecated_models``). They stay priced: old renders still report
# usage; a conversation naming one gets a warning (once per process).
END_OF_LIFE: dict[str, str] = {
    "claude-sonnet-4-5": "2026-11-30",
    "claude-opus-4-5": "2027-01-22",
    "claude-mythos-preview": "2026-06-30",
}


def end_of_life(model: str) -> tuple[str, str] | None:
    """``(family, end-of-life date)`` when ``model`` (or its dated snapshot) is being retired."""
    key = model_entry(END_OF_LIFE, model)
    return (key, END_OF_LIFE[key]) if key is not None else None


PRICE_FIELDS = ("input", "output", "cache_write_5m", "cache_write_1h", "cache_read")
ROW_KEYS = frozenset({"provider", "cache_ttls", *PRICE_FIELDS})


def price_table(overrides: Mapping[str, Mapping[str, Any]]) -> dict[str, Price]:
    """The default table with ``overrides`` applied: ``{model: {provider?, input, output,
    cache_write_5m?, cache_write_1h?, cache_read?, cache_ttls?}}``, prices as decimal strings per
    million tokens, ``cache_ttls`` the explicit cache TTLs of an OpenAI model that takes
    breakpoints (``["30m", "12h"]``; ``[]``: none). A missing cache price follows the provider's
    multipliers. ``ValueError`` on a bad row."""
    table = dict(DEFAULT_PRICES)
    for model, row in overrides.items():
        if not isinstance(row, Mapping):
            raise ValueError(f"{model}: a price row must be an object")
        unknown = set(row) - ROW_KEYS
        if unknown:
            raise ValueError(f"{model}: unknown keys {sorted(unknown)}")
        base = table.get(model)
        provider = row.get("provider", base.provider if base else None)
        if provider not in ("anthropic", "openai", "google"):
            raise ValueError(f"{model}: provider must be 'anthropic', 'openai' or 'google'")
        try:
            values = {name: Decimal(str(row[name])) for name in PRICE_FIELDS if name in row}
        except ArithmeticError as exc:
            raise ValueError(f"{model}: prices must be decimal numbers") from exc
        if any(not value.is_finite() or value < 0 for value in values.values()):
            raise ValueError(f"{model}: prices must be finite and >= 0")
        if base is None and not {"input", "output"} <= set(values):
            raise ValueError(f"{model}: input and output prices are required")
        if base is None:
            input_price, output_price = values["input"], values["output"]
        else:
            input_price, output_price = values.get("input", base.input), values.get("output", base.output)
        ttls = row.get("cache_ttls", base.cache_ttls if base and base.provider == provider else ())
        if (
            not isinstance(ttls, (list, tuple))
            or any(t not in OPENAI_CACHE_TTLS for t in ttls)
            or (ttls and provider != "openai")
        ):
            raise ValueError(
                f"{model}: cache_ttls must be a list of {list(OPENAI_CACHE_TTLS)} (OpenAI models)"
            )
        if base is not None and base.provider == provider and "input" not in values:
            defaults = base
        elif provider == "anthropic":
            defaults = _anthropic(str(input_price), str(output_price))
        elif provider == "google":
            defaults = _google(str(input_price), str(output_price))
        elif ttls:
            defaults = _openai_explicit(
                str(input_price), str(input_price * Decimal("0.1")), str(output_price)
            )
        else:  # an OpenAI-compatible model without a cached price gets no discount
            defaults = _openai(str(input_price), str(input_price), str(output_price))
        table[model] = Price(
            provider=provider,
            input=input_price,
            output=output_price,
            cache_write_5m=values.get("cache_write_5m", defaults.cache_write_5m),
            cache_write_1h=values.get("cache_write_1h", defaults.cache_write_1h),
            cache_read=values.get("cache_read", defaults.cache_read),
            cache_ttls=tuple(ttls),
        )
    return table


def price_for(table: Mapping[str, Price], model: str) -> tuple[str, Price] | None:
    key = model_entry(table, model)
    return (key, table[key]) if key is not None else None


@dataclass(frozen=True)
class TokenCounts:
    """Billed tokens of one call, by kind (a normalised provider usage object)."""

    uncached_input: int
    cache_read: int
    cache_write_5m: int
    cache_write_1h: int
    output: int

    @property
    def input_total(self) -> int:
        return self.uncached_input + self.cache_read + self.cache_write_5m + self.cache_write_1h


def call_cost(price: Price, tokens: TokenCounts) -> Decimal:
    """What the call cost, in dollars, exactly."""
    return (
        tokens.uncached_input * price.input
        + tokens.cache_read * price.cache_read
        + tokens.cache_write_5m * price.cache_write_5m
        + tokens.cache_write_1h * price.cache_write_1h
        + tokens.output * price.output
    ) / MILLION


def cost_without_cache(price: Price, tokens: TokenCounts) -> Decimal:
    """What the same call would have cost with no prompt caching: all input at the input price."""
    return (tokens.input_total * price.input + tokens.output * price.output) / MILLION
