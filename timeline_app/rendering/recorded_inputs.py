"""What a render record keeps of a render's inputs, and reading them back (pure): resolved
settings, format, contribution filters and the system prompt's digest, as JSON, so that
``replay`` renders it again with the same inputs."""

from __future__ import annotations

from dataclasses import asdict, fields, replace
from typing import Any

from timeline_app.domain.settings import RenderSettings

from .pipeline import RenderOptions

INPUTS_VERSION = 1


def render_inputs(*, settings: RenderSettings, options: RenderOptions, system_digest: str) -> dict[str, Any]:
    """What a record keeps of a render's inputs (JSON)."""
    return {
        "version": INPUTS_VERSION,
        "settings": asdict(settings),
        "format": options.format,
        "cache_last": options.cache_last,
        "exclude": sorted(options.exclude_contributions),
        "include_only": sorted(options.include_only_contributions),
        "include_sources": options.include_sources,
        "include_announce": options.include_announce,
        "system_digest": system_digest,
    }


def read_settings(raw: Any) -> RenderSettings | None:
    """The settings a record kept, read back; None when they no longer fit ``RenderSettings``."""
    if not isinstance(raw, dict):
        return None
    known = {f.name for f in fields(RenderSettings)}
    if set(raw) - known:
        return None
    try:
        return replace(RenderSettings(), **raw)
    except (TypeError, ValueError):
        return None


def read_options(inputs: dict[str, Any]) -> RenderOptions:
    """The render options a record kept (format, ``cache_last``, contribution filters)."""
    return RenderOptions(
        format=inputs["format"],
        cache_last=bool(inputs.get("cache_last", True)),
        exclude_contributions=tuple(inputs.get("exclude") or ()),
        include_only_contributions=tuple(inputs.get("include_only") or ()),
    )
