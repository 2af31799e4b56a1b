from django.apps import AppConfig


class TimelineAppConfig(AppConfig):
    name = "timeline_app"
    verbose_name = "Timelines"
    default_auto_field = "django.db.models.BigAutoField"
