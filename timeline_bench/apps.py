from django.apps import AppConfig


class TimelineBenchConfig(AppConfig):
    name = "timeline_bench"
    verbose_name = "Benchmarks and dev commands"
