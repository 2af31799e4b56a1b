"""Retired models: a conversation that names one gets a warning in the log, once per process per
model (not per call), and keeps working: the price table still prices it (``usage/pricing.py``
``END_OF_LIFE``)."""

from __future__ import annotations

import logging
import threading

from timeline_app.rendering.usage.pricing import end_of_life

log = logging.getLogger(__name__)

CURRENT_ANTHROPIC_MODEL = "claude-sonnet-5-5"

_warned: set[str] = set()
_lock = threading.Lock()


def warn_if_retired(model: str, *, where: str) -> bool:
    """Log a warning the first time this process sees a retiring model (``where``: what named it,
    for the log line). True when this call warned."""
    retiring = end_of_life(model) if model else None
    if retiring is None:
        return False
    family, date = retiring
    with _lock:
        if family in _warned:
            return False
        _warned.add(family)
    log.warning(
        "model %s (%s) is deprecated by its provider and reaches end of life on %s; "
        "move to a current model such as %s (warned once per process)",
        model,
        where,
        date,
        CURRENT_ANTHROPIC_MODEL,
    )
    return True


def forget_warnings() -> None:
    """Tests: start again as a fresh process would."""
    with _lock:
        _warned.clear()
