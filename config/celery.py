"""The Celery app. Eager (in-process) in the embedded mode, a Redis broker in production.

Configured from Django settings (``CELERY_*``, including the beat schedule); tasks are found in
each app's ``tasks.py``. Run ``celery -A config worker`` and ``celery -A config beat``
(docs/background.md).
"""

import os

from celery import Celery
from celery.signals import worker_ready

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("timeline")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


def serve_worker_metrics(**_: object) -> None:
    """A worker on a host without a web process exports its own metrics (compactions, summaries)
    on ``TIMELINE_WORKER_METRICS_PORT`` (address ``TIMELINE_WORKER_METRICS_ADDR``, loopback by
    default). With the prefork pool the tasks run in child processes: set
    ``PROMETHEUS_MULTIPROC_DIR`` too, so their samples are summed."""
    port = os.environ.get("TIMELINE_WORKER_METRICS_PORT", "")
    if not port:
        return
    from prometheus_client import start_http_server

    from timeline_app.metrics import registry

    addr = os.environ.get("TIMELINE_WORKER_METRICS_ADDR", "127.0.0.1")
    start_http_server(int(port), addr=addr, registry=registry())


worker_ready.connect(serve_worker_metrics, weak=False)
