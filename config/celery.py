"""The Celery app. Eager (in-process) in the embedded mode, a Redis broker in production.

Configured from Django settings (``CELERY_*``, including the beat schedule); tasks are found in
each app's ``tasks.py``. Run ``celery -A config worker`` and ``celery -A config beat``
(docs/background.md).
"""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("timeline")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
