"""``python manage.py bench append|engine|compaction|all``: speed goals as ratios, measured in one run."""

from __future__ import annotations

import importlib
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

SUITES = ("append", "engine", "compaction", "storage")


def unapplied_migrations() -> int:
    executor = MigrationExecutor(connection)
    return len(executor.migration_plan(executor.loader.graph.leaf_nodes()))


class Command(BaseCommand):
    help = "Run a benchmark and print medians and ratios against a baseline measured in the same run."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("suite", choices=[*SUITES, "all"])

    def handle(self, *args: Any, **options: Any) -> None:
        if pending := unapplied_migrations():
            raise CommandError(
                f"the database ({connection.settings_dict['NAME']}) has {pending} unapplied migration(s): "
                "run `make run` once or `.venv/bin/python manage.py migrate` first"
            )
        suites = SUITES if options["suite"] == "all" else (options["suite"],)
        for suite in suites:
            module = importlib.import_module(f"timeline_app.benchmarks.{suite}")
            module.run(self.stdout.write)
