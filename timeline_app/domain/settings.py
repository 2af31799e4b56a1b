"""Render and compaction settings (DESIGN §4): defaults, per-conversation overrides, validation."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, fields, replace
from typing import Any


class SettingsError(ValueError):
    """A settings object with an unknown key or a value of the wrong type or range."""

    def __init__(self, details: dict[str, str]):
        super().__init__("; ".join(f"{k}: {v}" for k, v in details.items()))
        self.details = details


@dataclass(frozen=True)
class RenderSettings:
    max_tokens: int = 200_000
    threshold: float = 0.9
    keep_recent_tokens: int | None = None
    cache_point_offset_rounds: int = 4
    cache_point_min_rounds: int = 2
    cache_ttl_seconds: int = 300
    cache_ttl_buffer_seconds: int = 10
    ttl_keep_recent_turns: int = 6
    summary_max_tokens: int = 800
    split_prefix_max_tokens: int = 400
    # Native Anthropic format: no cache marker whose prefix is shorter (the provider's minimum
    # cacheable length; below it the request succeeds and silently caches nothing).
    cache_min_tokens: int = 1024
    # The model the LLM summarizer uses for this conversation (None: TIMELINE_SUMMARY_MODEL). The
    # shell checks it against the configured summarizer's provider.
    summary_model: str | None = None
    # Native formats that need the user's message last (``anthropic_messages``, ``gemini_contents``):
    # the text of the short user message a render ends with when the history ends with the model's
    # (unless the render asks for ``prefill``). In the uncached tail: no cache marker moves.
    continue_text: str = "Continue."
    # Every render ends its uncached tail with one line of the context's budget (``budget_note``
    # on a render overrides it): "[context: 61,204 of 200,000 tokens; compaction at 180,000]".
    budget_note: bool = False

    @property
    def effective_keep_recent_tokens(self) -> int:
        """``keep_recent_tokens`` (0.3 × ``max_tokens`` when unset), at most ``max_tokens``: stored
        settings never hold more (``validate_overrides``), but a render's own lower ``max_tokens``
        clamps it."""
        if self.keep_recent_tokens is not None:
            return min(self.keep_recent_tokens, self.max_tokens)
        return int(0.3 * self.max_tokens)

    @property
    def compaction_limit(self) -> int:
        """Tokens above which a render compacts: ``threshold × max_tokens``."""
        return int(self.threshold * self.max_tokens)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# Allowed range per key: (minimum, maximum); None means open.
_RANGES: dict[str, tuple[float, float]] = {
    "max_tokens": (1_000, 10_000_000),
    "threshold": (0.05, 1.0),
    "keep_recent_tokens": (0, 10_000_000),
    "cache_point_offset_rounds": (1, 1_000),
    "cache_point_min_rounds": (0, 1_000),
    "cache_ttl_seconds": (0, 86_400),
    "cache_ttl_buffer_seconds": (0, 3_600),
    "ttl_keep_recent_turns": (0, 10_000),
    "summary_max_tokens": (50, 32_000),
    "split_prefix_max_tokens": (50, 32_000),
    "cache_min_tokens": (0, 100_000),
}
SETTING_KEYS = tuple(f.name for f in fields(RenderSettings))
# Settings that hold text, with the pattern they must match (schema and validation).
MODEL_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:/@\-]{0,99}$"
TEXT_SETTINGS: dict[str, str] = {"summary_model": MODEL_NAME_PATTERN}
# Settings that hold free text, with their maximum length (never blank).
FREE_TEXT_SETTINGS: dict[str, int] = {"continue_text": 2_000}

# Settings that are true or false.
BOOL_SETTINGS: tuple[str, ...] = ("budget_note",)
# Public: the API declares these ranges in its OpenAPI schema.
SETTING_RANGES = _RANGES


def validate_overrides(overrides: Any) -> dict[str, Any]:
    """Check a ``settings`` object from a client; return it normalised or raise SettingsError.

    Each key on its own (``_checked_keys``), then together: ``keep_recent_tokens`` may not exceed
    the ``max_tokens`` it comes with (the default 200,000 when not overridden): the recent tokens
    a compaction keeps could never fit the context."""
    clean = _checked_keys(overrides)
    keep = clean.get("keep_recent_tokens")
    limit = clean.get("max_tokens", RenderSettings.max_tokens)
    if keep is not None and keep > limit:
        raise SettingsError(
            {"keep_recent_tokens": f"must be at most max_tokens ({limit}): the recent tokens kept must fit"}
        )
    return clean


def _checked_keys(overrides: Any) -> dict[str, Any]:
    """Every key of a ``settings`` object checked on its own: known, of its type, in its range."""
    if not isinstance(overrides, dict):
        raise SettingsError({"settings": "must be an object"})
    errors: dict[str, str] = {}
    clean: dict[str, Any] = {}
    for key, value in overrides.items():
        if key in FREE_TEXT_SETTINGS:
            limit = FREE_TEXT_SETTINGS[key]
            if not isinstance(value, str) or not value.strip() or len(value) > limit:
                errors[key] = f"must be a non-blank text of at most {limit} characters"
            else:
                clean[key] = value
            continue
        if key in TEXT_SETTINGS:
            if value is not None and (not isinstance(value, str) or not re.match(TEXT_SETTINGS[key], value)):
                errors[key] = "must be a model name (letters, digits, _.:/@-; at most 100) or null"
            else:
                clean[key] = value
            continue
        if key in BOOL_SETTINGS:
            if isinstance(value, bool):
                clean[key] = value
            else:
                errors[key] = "must be true or false"
            continue
        if key not in _RANGES:
            errors[key] = "unknown setting"
            continue
        if key == "keep_recent_tokens" and value is None:
            clean[key] = None
            continue
        if key == "threshold":
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        else:
            ok = isinstance(value, int) and not isinstance(value, bool)
        if not ok:
            errors[key] = "must be a number" if key == "threshold" else "must be an integer"
            continue
        low, high = _RANGES[key]
        if not low <= value <= high:
            errors[key] = f"must be between {low:g} and {high:g}"
            continue
        clean[key] = float(value) if key == "threshold" else value
    if errors:
        raise SettingsError(errors)
    return clean


def resolve_settings(overrides: dict[str, Any] | None = None, **call_overrides: Any) -> RenderSettings:
    """Defaults, then the conversation's overrides, then per-call overrides (already validated)."""
    merged = dict(overrides or {})
    merged.update({k: v for k, v in call_overrides.items() if v is not None})
    return replace(RenderSettings(), **merged)


def resolve_stored(overrides: Any, **call_overrides: Any) -> tuple[RenderSettings, dict[str, str]]:
    """The one policy for a conversation's stored overrides (written when valid; a later release
    can narrow a range or drop a key): each stored override that no longer validates is replaced
    by its default, the others still apply, then the per-call overrides. Returns the settings and
    the overrides left out, ``{key: why}`` (empty when every stored one applies)."""
    if not isinstance(overrides, dict):
        return resolve_settings({}, **call_overrides), (
            {"settings": "must be an object"} if overrides else {}
        )
    clean: dict[str, Any] = {}
    ignored: dict[str, str] = {}
    for key, value in overrides.items():
        try:
            clean.update(_checked_keys({key: value}))
        except SettingsError as exc:
            ignored.update(exc.details)
    return resolve_settings(clean, **call_overrides), ignored
