"""gunicorn's configuration, from the environment (README "Production").

``gunicorn -c config/gunicorn.py config.wsgi`` — used by ``make serve``, the Procfile and the systemd
unit alike. Threads make the ``gthread`` worker: a render that waits for a running compaction
(30 s at most) blocks one thread, not the whole process.
"""

import multiprocessing
import os


def _int(name: str, default: int) -> int:
    value = os.environ.get(name, "")
    try:
        return int(value) if value else default
    except ValueError:
        raise SystemExit(f"{name} must be an integer, got {value!r}") from None


bind = os.environ.get("GUNICORN_BIND", "127.0.0.1:8000")
workers = _int("GUNICORN_WORKERS", min(2 * multiprocessing.cpu_count() + 1, 8))
threads = _int("GUNICORN_THREADS", 4)
worker_class = "gthread"
timeout = _int("GUNICORN_TIMEOUT", 60)
graceful_timeout = _int("GUNICORN_GRACEFUL_TIMEOUT", 30)
keepalive = _int("GUNICORN_KEEPALIVE", 5)
# Recycle workers now and then (memory), staggered so they never restart all at once.
max_requests = _int("GUNICORN_MAX_REQUESTS", 5000)
max_requests_jitter = max_requests // 10
# Access log: the path without its query string (a search query is the user's text), status,
# bytes and the time taken in microseconds. "-" is stderr; empty turns it off.
accesslog = os.environ.get("GUNICORN_ACCESS_LOG", "-") or None
access_log_format = '%(h)s "%(m)s %(U)s" %(s)s %(B)s %(D)sus'
errorlog = "-"
loglevel = os.environ.get("GUNICORN_LOG_LEVEL", "info")
forwarded_allow_ips = os.environ.get("GUNICORN_FORWARDED_ALLOW_IPS", "127.0.0.1")
# gunicorn answers requests over these limits itself, with its own text/html page (414 for the
# request line, 431 for a header, 400 for too many headers), before Django could answer the
# error shape. 8190 bytes (gunicorn's largest finite request line, twice its default) holds every
# request line the API's own limits allow for a search (`q` of 500 characters, percent-encoded
# UTF-8) and a read by path of 1024 characters up to U+07FF (about 660 characters beyond
# U+FFFF); README "Production" says what a longer one gets.
limit_request_line = _int("GUNICORN_LIMIT_REQUEST_LINE", 8190)
limit_request_fields = _int("GUNICORN_LIMIT_REQUEST_FIELDS", 100)
limit_request_field_size = _int("GUNICORN_LIMIT_REQUEST_FIELD_SIZE", 8190)


def child_exit(server, worker):  # type: ignore[no-untyped-def]
    """Prometheus multiprocess mode: a dead worker's live gauges leave the aggregate."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid)  # type: ignore[no-untyped-call]
