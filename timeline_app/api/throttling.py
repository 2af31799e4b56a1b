"""The compact throttle: one count per API key and window, shared by every process.

DRF's ``ScopedRateThrottle`` keeps a list of request times in the cache and writes it back (read,
modify, write): with a per-process cache every worker counts alone, and even with a shared one two
workers racing lose each other's requests. Here each window is one counter in the shared cache
(``settings.CACHES``: Redis when one is configured, the database cache otherwise), bumped with
``incr``: atomic on Redis, so N workers together allow exactly the configured rate.
"""

from __future__ import annotations

from typing import Any

from rest_framework.request import Request
from rest_framework.throttling import ScopedRateThrottle


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
        # add() only creates the counter; incr() is the one atomic step every process shares.
        self.cache.add(key, 0, timeout=duration + 5)
        try:
            count = self.cache.incr(key)
        except ValueError:  # the counter expired between add() and incr()
            self.cache.add(key, 1, timeout=duration + 5)
            count = 1
        return bool(count <= self.num_requests)

    def wait(self) -> float | None:
        return max(0.0, self.window_end - self.timer())
