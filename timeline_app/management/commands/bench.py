"""``python manage.py bench append|engine|compaction|storage|export|all`` (speed and size goals as ratios,
measured in one run) and ``bench load --url …`` (simulated agents against a running stack)."""

from __future__ import annotations

import importlib
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from timeline_app import tenancy
from timeline_app.benchmarks import formats, load

SUITES = ("append", "engine", "compaction", "storage", "export")


def unapplied_migrations() -> int:
    executor = MigrationExecutor(connection)
    return len(executor.migration_plan(executor.loader.graph.leaf_nodes()))


class Command(BaseCommand):
    help = "Run a benchmark and print medians and ratios against a baseline measured in the same run."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("suite", choices=[*SUITES, "all", "load", "formats"])
        formats = parser.add_argument_group("formats", "bench formats: native renders of random timelines")
        formats.add_argument("--timelines", type=int, default=1_000, help="random timelines (default 1000)")
        formats.add_argument("--seed", type=int, default=0, help="the first timeline's seed (default 0)")
        formats.add_argument(
            "--sdk-every",
            type=int,
            default=10,
            help="check the SDK request types on every k-th timeline (0: never)",
        )
        load = parser.add_argument_group("load", "bench load: simulated agents against a running stack")
        load.add_argument("--url", default="http://127.0.0.1:8000", help="the stack (loopback only)")
        load.add_argument("--agents", type=int, default=16, help="concurrent agents (default 16)")
        load.add_argument("--blocks", type=int, default=300, help="blocks each agent writes (default 300)")
        load.add_argument(
            "--max-seconds", type=float, default=300.0, help="stop after this long (default 300)"
        )
        load.add_argument("--max-tokens", type=int, default=20_000, help="each conversation's max_tokens")

    def handle(self, *args: Any, **options: Any) -> None:
        with tenancy.tenant_scope_all():  # a management command: every tenant (row-level security)
            self._handle(**options)

    def _handle(self, **options: Any) -> None:
        if pending := unapplied_migrations():
            raise CommandError(
                f"the database ({connection.settings_dict['NAME']}) has {pending} unapplied migration(s): "
                "run `make run` once or `.venv/bin/python manage.py migrate` first"
            )
        if options["suite"] == "load":
            self.load(options)
            return
        if options["suite"] == "formats":
            if not 1 <= options["timelines"] <= 10_000_000:
                raise CommandError("--timelines must be 1..10000000")
            formats.run(
                self.stdout.write,
                timelines=options["timelines"],
                seed=options["seed"],
                sdk_every=options["sdk_every"],
            )
            return
        suites = SUITES if options["suite"] == "all" else (options["suite"],)
        for suite in suites:
            module = importlib.import_module(f"timeline_app.benchmarks.{suite}")
            module.run(self.stdout.write)

    def load(self, options: dict[str, Any]) -> None:
        if not (1 <= options["agents"] <= 256 and 1 <= options["blocks"] <= 100_000):
            raise CommandError("--agents must be 1..256 and --blocks 1..100000")
        config = load.LoadConfig(
            url=options["url"],
            agents=options["agents"],
            blocks=options["blocks"],
            max_seconds=min(options["max_seconds"], 3600.0),
            max_tokens=options["max_tokens"],
        )
        try:
            load.run(self.stdout.write, config=config)
        except (load.NotLoopback, RuntimeError) as exc:
            raise CommandError(str(exc)) from None
