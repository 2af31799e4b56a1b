"""``bench quality --judge``: probe questions answered by a model from the compacted context (the
render after a compaction) and from the full one (everything written before it), scored the same
way. Needs ``ANTHROPIC_API_KEY``; without it the run is skipped with a message. Never part of
``make test``.

The call goes straight to the Messages API over ``httpx`` (only the summarizer adapter may import
the ``anthropic`` SDK). The full context is cut to its newest ``FULL_CONTEXT_CHARS`` characters.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import Any

import httpx
from django.conf import settings

from timeline_bench.quality.runner import SessionResult
from timeline_bench.quality.sessions import (
    ARTIFACT,
    DECISION,
    ERROR,
    IDENTIFIER,
    INSTRUCTION,
    LATEST_REQUEST,
    PENDING_STEP,
    PROBE_TYPES,
    Probe,
)

URL = "https://api.anthropic.com/v1/messages"
MODEL = os.environ.get("TIMELINE_JUDGE_MODEL", "claude-sonnet-5-5")
FULL_CONTEXT_CHARS = 600_000  # about 150k tokens
QUESTIONS = {
    IDENTIFIER: "List every order number, ticket id, booking code, DOI, URL, version, dataset or other "
    "identifier the user or the assistant mentioned, one per line, copied exactly.",
    INSTRUCTION: "Which standing instructions or constraints did the user give for the whole conversation? "
    "Quote each one exactly.",
    LATEST_REQUEST: "What is the user's latest request (not a short follow-up such as 'ok')? Quote it.",
    PENDING_STEP: "Which steps of the current plan are still pending? One per line, as written in the plan.",
    ARTIFACT: "Which files were read, written, saved, exported or attached, and what was done to each? "
    "One per line with the exact path.",
    DECISION: "Which decisions did the assistant make, and why? One per line.",
    ERROR: "Which errors occurred, and where (tool call or block path)? One per line with the exact error code.",
}
_WORD = re.compile(r"[a-z0-9]+")


class NoKey(Exception):
    pass


def require_key() -> str:
    key = getattr(settings, "ANTHROPIC_API_KEY", "")
    if not key:
        raise NoKey("skipped: --judge needs ANTHROPIC_API_KEY (not set); nothing was run")
    return str(key)


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) > 2}


def answered(probe: Probe, answer: str) -> bool:
    """An exact value (identifier, path, error code) must be quoted; a sentence needs 60 % of its
    words."""
    lowered = answer.lower()
    if probe.type in (IDENTIFIER, ARTIFACT, ERROR):
        return all(value.lower() in lowered for value in probe.values)
    said = _words(answer)
    for value in probe.values:
        words = _words(value)
        if words and len(words & said) / len(words) < 0.6:
            return False
    return True


def ask(client: httpx.Client, key: str, context: str, question: str) -> str:
    response = client.post(
        URL,
        headers={"x-api-key": key, "anthropic-version": "2023-06-01", "content-type": "application/json"},
        json={
            "model": MODEL,
            "max_tokens": 1024,
            "system": "Answer only from the conversation context given. If it does not say, answer 'unknown'.",
            "messages": [
                {"role": "user", "content": f"<context>\n{context}\n</context>\n\n{question}"},
            ],
        },
        timeout=120.0,
    )
    response.raise_for_status()
    return "".join(part.get("text", "") for part in response.json().get("content", []))


def judge(results: Sequence[SessionResult], *, limit: int) -> dict[str, Any]:
    """Per probe type: the share answered from the compacted context and from the full one, over
    the last check point of at most ``limit`` sessions."""
    key = require_key()
    tally: dict[str, dict[str, int]] = {t: {"probes": 0, "compacted": 0, "full": 0} for t in PROBE_TYPES}
    errors = 0
    samples = [r.judge_sample for r in results if r.judge_sample is not None][:limit]
    with httpx.Client() as client:
        for sample in samples:
            for type_ in PROBE_TYPES:
                probes = [p for p in sample.probes if p.type == type_]
                if not probes:
                    continue
                try:
                    compacted = ask(client, key, sample.compacted, QUESTIONS[type_])
                    full = ask(client, key, sample.full[-FULL_CONTEXT_CHARS:], QUESTIONS[type_])
                except httpx.HTTPError:
                    errors += 1
                    continue
                row = tally[type_]
                row["probes"] += len(probes)
                row["compacted"] += sum(answered(p, compacted) for p in probes)
                row["full"] += sum(answered(p, full) for p in probes)
    return {"model": MODEL, "check_points": len(samples), "errors": errors, "types": tally}


def table(report: dict[str, Any]) -> list[str]:
    lines = [
        f"judge ({report['model']}, {report['check_points']} check points, {report['errors']} failed calls): "
        "share of probes answered",
        "",
        "| probe | probes | from the compacted context % | from the full context % |",
        "|---|---|---|---|",
    ]
    for type_, row in report["types"].items():
        n = row["probes"]
        compacted = f"{100 * row['compacted'] / n:.1f}" if n else "-"
        full = f"{100 * row['full'] / n:.1f}" if n else "-"
        lines.append(f"| {type_} | {n} | {compacted} | {full} |")
    return lines
