"""The Redis broker transport, with kombu's use-after-close fixed (issue 30, defect 8).

When the broker connection drops, Celery's consumer closes the kombu connection, which sets its
transport's ``client`` to ``None`` and drops each channel's Redis connection pool. A channel of the
old connection can still be asked to restore, acknowledge or requeue a delivered task afterwards
(a task cancelled on the connection loss requeued by ``reject_on_worker_lost``, a channel a failed
close left open, the QoS finalizer): its pool is rebuilt from ``transport.client``, and kombu
5.7 fails with ``AttributeError: 'NoneType' object has no attribute 'hostname'``, which stops the
worker (seen once in three chaos runs when Redis restarted under load).

Here a channel keeps the connection's parameters it was made with and rebuilds its pool from them
when the transport was closed meanwhile: the late restore reaches Redis (or fails with Redis's own
connection error, which Celery retries) instead of killing the worker. Selected by
``CELERY_BROKER_TRANSPORT`` for ``redis://`` and ``rediss://`` brokers (config/settings.py).
"""

from __future__ import annotations

from typing import Any

from kombu.transport import redis


class Channel(redis.Channel):  # kombu ships partial type hints: its calls are untyped
    def __init__(self, connection: Any, *args: Any, **kwargs: Any) -> None:
        # ``connection`` is the transport; its ``client`` the ``kombu.Connection`` (URL, credentials).
        self._made_with = connection.client
        super().__init__(connection, *args, **kwargs)  # type: ignore[no-untyped-call]

    def _connparams(self, asynchronous: bool = False) -> dict[str, Any]:
        if self.connection.client is None:  # the transport was closed since: its parameters again
            self.connection.client = self._made_with
        params: dict[str, Any] = super()._connparams(asynchronous=asynchronous)  # type: ignore[no-untyped-call]
        return params


class Transport(redis.Transport):
    Channel = Channel
