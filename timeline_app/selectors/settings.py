"""The settings a timeline renders and compacts with: one policy, read in one place.

A conversation's stored overrides were valid when written; one that no longer validates (a range
narrowed, a key dropped, a row edited by hand) is replaced by its default and the others still
apply (``domain.settings.resolve_stored``). It is logged once per process and conversation, and
a render reports it in ``ignored_settings``. Render, the compact task, the sweep and the admin
all read settings through here.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from timeline_app.domain.settings import RenderSettings, resolve_stored
from timeline_app.models import Timeline

logger = logging.getLogger(__name__)

_LOGGED_MAX = 10_000
_logged: set[tuple[int, str]] = set()


@dataclass(frozen=True)
class ResolvedSettings:
    settings: RenderSettings
    # Stored overrides that no longer validate, ``{key: why}``: their defaults were used.
    ignored: dict[str, str] = field(default_factory=dict)


def settings_resolve(
    *, conversation_id: int, overrides: Any, max_tokens: int | None = None
) -> ResolvedSettings:
    """A conversation's settings from its stored ``overrides`` (see the module docstring)."""
    settings, ignored = resolve_stored(overrides, max_tokens=max_tokens)
    if ignored:
        key = (conversation_id, repr(sorted(ignored.items())))
        if key not in _logged:
            if len(_logged) >= _LOGGED_MAX:
                _logged.clear()
            _logged.add(key)
            logger.warning(
                "conversation %s: stored settings no longer valid, defaults used for them: %s",
                conversation_id,
                ignored,
            )
    return ResolvedSettings(settings=settings, ignored=ignored)


def timeline_settings_resolved(*, timeline: Timeline, max_tokens: int | None = None) -> ResolvedSettings:
    conversation = timeline.conversation
    return settings_resolve(
        conversation_id=conversation.pk, overrides=conversation.settings, max_tokens=max_tokens
    )


def timeline_settings(*, timeline: Timeline, max_tokens: int | None = None) -> RenderSettings:
    """The settings ``timeline`` renders and compacts with (its conversation's, per the policy)."""
    return timeline_settings_resolved(timeline=timeline, max_tokens=max_tokens).settings
