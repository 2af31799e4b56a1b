"""The compact throttle: one count per API key and window, shared by every process.

DRF's ``ScopedRateThrottle`` keeps a list of request times in the cache and writes it back (read,
modify, write): with a per-process cache every worker counts alone, and even with a shared one two
workers racing lose each other's requests. Here each window is one counter in the shared cache
(``settings.CACHES``: Redis when one is configured, the database cache otherwise), bumped with
``incr``: atomic on Redis, so N workers together allow exactly the configured rate.

While the shared cache is unreachable (Redis down) the throttle does not fail the call: each
process counts in its own memory instead, so N processes together allow up to N times the rate
until the cache is back (a warning is logged each time).
"""

from __future__ import annotations

import logging
from typing import Any

from django.core.cache.backends.base import BaseCache
from django.core.cache.backends.locmem import LocMemCache
from rest_framework.request import Request
from rest_framework.throttling import ScopedRateThrottle

from timeline_app.api.exceptions import dependency_outage

logger = logging.getLogger(__name__)

# This process's own counters while the shared cache is down (add and incr hold its lock).
FALLBACK_CACHE = LocMemCache("timeline-throttle-fallback", {"OPTIONS": {"MAX_ENTRIES": 10_000}})


class SharedScopedRateThrottle(ScopedRateThrottle):
    """``throttle_scope`` rates (``DEFAULT_THROTTLE_RATES``) counted per key in fixed windows."""

    cache_format = "throttle:%(scope)s:%(ident)s"

    def allow_request(self, request: Request, view: Any) -> bool:
        self.scope = getattr(view, self.scope_attr, None)
        if not self.scope:
            return True
        self.rate = self.get_rate()
        self.num_requests, self.duration = self.parse_rate(self.rate)
        ident = self.get_cache_key(request, view)
        if ident is None or self.num_requests is None or self.duration is None:
            return True
        duration = self.duration
        window = int(self.timer() // duration)
        self.window_end = float((window + 1) * duration)
        key = f"{ident}:{window}"
        try:
            count = self._count(self.cache, key, timeout=duration + 5)
        except Exception as exc:
            if dependency_outage(exc) is None:
                raise
            logger.warning("throttle cache unreachable (%s): counting in this process", type(exc).__name__)
            count = self._count(FALLBACK_CACHE, key, timeout=duration + 5)
        return bool(count <= self.num_requests)

    @staticmethod
    def _count(cache: BaseCache, key: str, *, timeout: int) -> int:
        # add() only creates the counter; incr() is the one atomic step every process shares.
        cache.add(key, 0, timeout=timeout)
        try:
            return int(cache.incr(key))
        except ValueError:  # the counter expired between add() and incr()
            cache.add(key, 1, timeout=timeout)
            return 1

    def wait(self) -> float | None:
        return max(0.0, self.window_end - self.timer())
