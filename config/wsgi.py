import logging
import os

from django.conf import settings
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()

# Said once at start (DESIGN §7): which of the embedded defaults are in use.
_log = logging.getLogger("timeline.startup")
if settings.CELERY_TASK_ALWAYS_EAGER:
    _log.info("Celery runs in eager mode (no CELERY_BROKER_URL): compaction tasks run in-process")
else:
    _log.info("Celery broker configured: compaction tasks go to the worker")
_log.info(
    "Database: %s; summarizer: %s",
    settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1],
    settings.TIMELINE_SUMMARIZER,
)
