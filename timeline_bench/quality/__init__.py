"""``bench quality``: what survives a compaction (issue 24; method and latest table in docs/quality.md).

Generated sessions of each phrasing set (``generated``: the benchmark's own templates;
``transcripts``: an independent set in the style of real tool output, issue 37), five kinds each,
run through the HTTP API in process until each has compacted at least twice; probes planted in them are checked in the render after each compaction (visible) and
through search and read-by-path (recoverable). Offline and deterministic with the extractive
summarizer; ``--summarizer anthropic`` runs the same sessions with Claude, and ``--judge`` asks a
model the probe questions from the compacted context and from the full one.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings as django_settings
from django.test import override_settings

from timeline_app.services.api_keys import api_key_create
from timeline_app.services.compaction import configured_summarizer
from timeline_bench.common import InProcessClient, scratch_tenant
from timeline_bench.quality import judge as judge_module
from timeline_bench.quality.report import side_by_side, summarize, table
from timeline_bench.quality.runner import QualitySettings, SessionResult, run_session
from timeline_bench.quality.sessions import PHRASINGS, generate

SUMMARIZERS = ("extractive", "anthropic", "openai")
__all__ = ["PHRASINGS", "SUMMARIZERS", "QualityOptions", "run", "run_sessions"]


class Unavailable(Exception):
    """The requested live mode cannot run here (no key, or the summarizer is not in this build)."""


@dataclass(frozen=True)
class QualityOptions:
    seed: int = 24
    sessions: int = 50
    summarizer: str = "extractive"
    judge: bool = False
    judge_checks: int = 5
    as_json: bool = False
    max_turns: int | None = None
    phrasings: tuple[str, ...] = PHRASINGS
    settings: QualitySettings = field(default_factory=QualitySettings)


@contextmanager
def _quiet_request_log() -> Iterator[None]:
    logger = logging.getLogger("timeline.request")
    level = logger.level
    logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        logger.setLevel(level)


def summarizer_overrides(name: str) -> dict[str, Any]:
    """The settings that select summarizer ``name``, or :class:`Unavailable` saying why not."""
    if name == "extractive":
        return {"TIMELINE_SUMMARIZER": "extractive", "TIMELINE_SUMMARIZER_CLASS": ""}
    if name == "anthropic" and not getattr(django_settings, "ANTHROPIC_API_KEY", ""):
        raise Unavailable("skipped: --summarizer anthropic needs ANTHROPIC_API_KEY (not set)")
    overrides = {"TIMELINE_SUMMARIZER": name, "TIMELINE_SUMMARIZER_CLASS": ""}
    with override_settings(**overrides):
        built = configured_summarizer()
    if built.name != name:
        raise Unavailable(
            f"skipped: the {name} summarizer is not available in this build "
            f"(TIMELINE_SUMMARIZER={name} is not known to the summarizer factory)"
        )
    if name == "openai" and not getattr(django_settings, "OPENAI_API_KEY", ""):
        raise Unavailable("skipped: --summarizer openai needs OPENAI_API_KEY (not set)")
    return overrides


def run_sessions(options: QualityOptions, phrasing: str = "generated") -> list[SessionResult]:
    """Generate and play the sessions of one phrasing set in a scratch tenant (deleted afterwards)."""
    overrides = summarizer_overrides(options.summarizer)
    sessions = generate(
        seed=options.seed, sessions=options.sessions, max_turns=options.max_turns, phrasing=phrasing
    )
    results: list[SessionResult] = []
    with _quiet_request_log(), override_settings(**overrides), scratch_tenant() as tenant:
        _, raw = api_key_create(tenant_name=tenant.name, name="bench-quality")
        client = InProcessClient(HTTP_AUTHORIZATION=f"Bearer {raw}")
        for session in sessions:
            results.append(run_session(client, session, options.settings, keep_texts=options.judge))
    return results


def run(write: Callable[[str], None], options: QualityOptions | None = None) -> dict[str, Any] | None:
    """Run the benchmark and write its table (or JSON); returns the report (None when skipped)."""
    options = options or QualityOptions()
    if options.judge:
        try:
            judge_module.require_key()
        except judge_module.NoKey as exc:
            write(str(exc))
            return None
    started = time.perf_counter()
    reports: dict[str, dict[str, Any]] = {}
    for phrasing in options.phrasings:
        try:
            results = run_sessions(options, phrasing)
        except Unavailable as exc:
            write(str(exc))
            return None
        reports[phrasing] = summarize(
            results,
            summary_max_tokens=options.settings.summary_max_tokens,
            max_tokens=options.settings.max_tokens,
        )
        if options.judge:
            reports[phrasing]["judge"] = judge_module.judge(results, limit=options.judge_checks)
    seconds = time.perf_counter() - started
    report: dict[str, Any] = {
        "phrasings": reports,
        "failures": [f"{name}: {failure}" for name, r in reports.items() for failure in r["failures"]],
        "run": {
            "seed": options.seed,
            "sessions": options.sessions,
            "phrasings": list(options.phrasings),
            "summarizer": options.summarizer,
            "wall_seconds": round(seconds, 1),
        },
    }
    if options.as_json:
        write(json.dumps(report, indent=2, sort_keys=True))
        return report
    write(
        f"bench quality: {options.sessions} sessions per phrasing set ({', '.join(options.phrasings)}), "
        f"seed {options.seed}, summarizer {options.summarizer}, {seconds:.0f} s"
    )
    write("")
    for line in side_by_side(reports):
        write(line)
    for name, one in reports.items():
        write("")
        write(f"phrasing set {name}:")
        for line in table(one):
            write(line)
        if options.judge:
            write("")
            for line in judge_module.table(one["judge"]):
                write(line)
    write("")
    if report["failures"]:
        write("goals missed: " + "; ".join(report["failures"]))
    else:
        write("every goal met")
    return report
