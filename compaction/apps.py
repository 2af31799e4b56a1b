import logging

from django.apps import AppConfig
from django.conf import settings

logger = logging.getLogger("timeline.startup")


class CompactionConfig(AppConfig):
    name = "compaction"
    verbose_name = "Compaction"

    def ready(self) -> None:
        if settings.CELERY_TASK_ALWAYS_EAGER:
            logger.info("Celery runs in eager mode (no CELERY_BROKER_URL): compaction tasks run in-process")
        else:
            logger.info("Celery broker configured: compaction tasks go to the worker")
        logger.info("Summarizer: %s", settings.TIMELINE_SUMMARIZER)
