"""``python manage.py bench append|engine|compaction|storage|export|cost|all`` (speed and size goals as
ratios, measured in one run; ``cost``: forecast agreement with a provider-cache simulator, docs/cost.md),
``bench load --url …`` (simulated agents against a running stack), ``bench formats`` (native renders of
random timelines), ``bench quality`` (what survives a compaction: docs/quality.md) and ``bench
cache-cost`` (billed prompt-cache cost per format on a simulated agent run)."""

from __future__ import annotations

import importlib
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from timeline_app import tenancy
from timeline_bench import cache_cost, formats, load, load_ab, quality

SUITES = ("append", "engine", "compaction", "storage", "export", "cost")


def unapplied_migrations() -> int:
    executor = MigrationExecutor(connection)
    return len(executor.migration_plan(executor.loader.graph.leaf_nodes()))


class Command(BaseCommand):
    help = "Run a benchmark and print medians and ratios against a baseline measured in the same run."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("suite", choices=[*SUITES, "all", "load", "formats", "quality", "cache-cost"])
        formats = parser.add_argument_group("formats", "bench formats: native renders of random timelines")
        formats.add_argument("--timelines", type=int, default=1_000, help="random timelines (default 1000)")
        parser.add_argument(
            "--seed",
            type=int,
            default=None,
            help="formats: the first timeline's seed (default 0); quality: the generator's seed "
            "(default 24); cache-cost: the run's seed (default 0)",
        )
        formats.add_argument(
            "--sdk-every",
            type=int,
            default=10,
            help="check the SDK request types on every k-th timeline (0: never)",
        )
        cost = parser.add_argument_group("cache-cost", "bench cache-cost: billed cache cost per format")
        cost.add_argument("--turns", type=int, default=30, help="turns of the simulated run (default 30)")
        cost.add_argument(
            "--ttl", type=int, choices=[300, 3600], default=300, help="the cache TTL setting (default 300)"
        )
        load = parser.add_argument_group("load", "bench load: simulated agents against a running stack")
        load.add_argument("--url", default="http://127.0.0.1:8000", help="the stack (loopback only)")
        load.add_argument("--agents", type=int, default=16, help="concurrent agents (default 16)")
        load.add_argument(
            "--blocks",
            type=int,
            default=None,
            help="blocks each agent writes (default 300; with --baseline 80 a run: 40 steps each)",
        )
        load.add_argument(
            "--baseline",
            default=None,
            metavar="REV",
            help="run the same load against this git revision and the working tree, two stacks at "
            "once, and print the ratio (needs DATABASE_URL on PostgreSQL and a Redis CELERY_BROKER_URL)",
        )
        load.add_argument("--runs", type=int, default=3, help="with --baseline: runs (default 3)")
        load.add_argument(
            "--max-seconds", type=float, default=300.0, help="stop after this long (default 300)"
        )
        load.add_argument(
            "--max-tokens",
            type=int,
            default=None,
            help="each conversation's max_tokens (default: load 20000, cache-cost 60000)",
        )
        q = parser.add_argument_group(
            "quality", "bench quality: what survives a compaction (docs/quality.md)"
        )
        q.add_argument("--sessions", type=int, default=50, help="sessions to generate (default 50)")
        q.add_argument("--summarizer", choices=quality.SUMMARIZERS, default="extractive")
        q.add_argument("--judge", action="store_true", help="ask a model the probe questions (needs a key)")
        q.add_argument(
            "--judge-checks", type=int, default=5, help="check points the judge asks about (default 5)"
        )
        q.add_argument("--json", action="store_true", help="the report as JSON")
        q.add_argument(
            "--phrasings",
            default=",".join(quality.PHRASINGS),
            help=f"phrasing sets to run, comma-separated (default {','.join(quality.PHRASINGS)})",
        )
        q.add_argument(
            "--max-turns", type=int, default=None, help="cut each session's planned turns (quick runs)"
        )

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
                seed=0 if options["seed"] is None else options["seed"],
                sdk_every=options["sdk_every"],
            )
            return
        if options["suite"] == "quality":
            self.quality(options)
            return
        if options["suite"] == "cache-cost":
            if not 1 <= options["turns"] <= 10_000:
                raise CommandError("--turns must be 1..10000")
            cache_cost.run(
                self.stdout.write,
                seed=0 if options["seed"] is None else options["seed"],
                turns=options["turns"],
                max_tokens=options["max_tokens"] or cache_cost.MAX_TOKENS,
                ttl_seconds=options["ttl"],
            )
            return
        suites = SUITES if options["suite"] == "all" else (options["suite"],)
        for suite in suites:
            module = importlib.import_module(f"timeline_bench.{suite}")
            module.run(self.stdout.write)

    def quality(self, options: dict[str, Any]) -> None:
        if not (1 <= options["sessions"] <= 1000 and 0 <= options["judge_checks"] <= 1000):
            raise CommandError("--sessions must be 1..1000 and --judge-checks 0..1000")
        phrasings = tuple(p.strip() for p in options["phrasings"].split(",") if p.strip())
        unknown = [p for p in phrasings if p not in quality.PHRASINGS]
        if unknown or not phrasings:
            raise CommandError(f"--phrasings: one or more of {', '.join(quality.PHRASINGS)}")
        if options["max_turns"] is not None and not 1 <= options["max_turns"] <= 1000:
            raise CommandError("--max-turns must be 1..1000")
        quality.run(
            self.stdout.write,
            quality.QualityOptions(
                seed=24 if options["seed"] is None else options["seed"],
                sessions=options["sessions"],
                summarizer=options["summarizer"],
                judge=options["judge"],
                judge_checks=options["judge_checks"],
                as_json=options["json"],
                max_turns=options["max_turns"],
                phrasings=phrasings,
            ),
        )

    def load(self, options: dict[str, Any]) -> None:
        blocks = options["blocks"] or (load_ab.AbConfig.blocks if options["baseline"] else 300)
        if not (1 <= options["agents"] <= 256 and 1 <= blocks <= 100_000):
            raise CommandError("--agents must be 1..256 and --blocks 1..100000")
        if options["baseline"]:
            if not 1 <= options["runs"] <= 50:
                raise CommandError("--runs must be 1..50")
            ab = load_ab.AbConfig(
                baseline=options["baseline"],
                runs=options["runs"],
                agents=options["agents"],
                blocks=blocks,
                max_tokens=options["max_tokens"] or 20_000,
                max_seconds=min(options["max_seconds"], 3600.0),
            )
            try:
                load_ab.run(self.stdout.write, config=ab)
            except RuntimeError as exc:
                raise CommandError(str(exc)) from None
            return
        config = load.LoadConfig(
            url=options["url"],
            agents=options["agents"],
            blocks=blocks,
            max_seconds=min(options["max_seconds"], 3600.0),
            max_tokens=options["max_tokens"] or 20_000,
        )
        try:
            load.run(self.stdout.write, config=config)
        except (load.NotLoopback, RuntimeError) as exc:
            raise CommandError(str(exc)) from None
