"""Drive generated sessions through the HTTP API in process and check every probe.

Each session is one conversation of a scratch tenant, written and rendered exactly as an agent
does over HTTP (Django's test client: URL routing, authentication, validation, services, the
configured summarizer): per turn ``POST turns/`` (prompt, attachments), ``POST blocks/`` (plan,
then notes + call + result per tool round), now and then ``POST hide/``, ``POST render/`` (with the
turn's simulated clock as ``now``, so pauses make TTL pruning run) and ``POST blocks/`` (the
completion). A render that compacted is a **check point**: every probe due there is looked up in
that render's text (visible) and through ``GET search/`` and ``GET blocks/?path=`` (recoverable).

Which probes are due at a check point (only probes whose block the latest summary covers: a probe
still in the retained blocks is trivially visible and is not counted):

* identifiers, artifacts, decisions, errors: at the compaction that covers their block (the next
  context: the share the goals apply to) and at the one after it (a second, progressive summary:
  reported apart);
* standing instructions: at every compaction after they were stated, to the end of the session;
* the latest request: the newest request the user made (follow-ups like "ok" are not requests);
* pending steps: the steps not done of the newest plan.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.test import Client

from timeline_app.domain.tokens import count_text_tokens
from timeline_app.models import Compaction, Conversation
from timeline_bench.quality.sessions import (
    ARTIFACT,
    INSTRUCTION,
    LATEST_REQUEST,
    PENDING_STEP,
    Probe,
    Round,
    Session,
    Turn,
)

API = "/api/v1/conversations"
HORIZON = 2  # compactions a one-off probe (identifier, artifact, decision, error) is checked at
MAX_EXTRA_TURNS = 200
SPLIT_HEADING = "## Turn Context (split turn)"


@dataclass(frozen=True)
class QualitySettings:
    """The conversation settings every session runs with (the rest are the service defaults)."""

    max_tokens: int = 8_000
    summary_max_tokens: int = 800

    def as_settings(self) -> dict[str, int]:
        return {"max_tokens": self.max_tokens, "summary_max_tokens": self.summary_max_tokens}


@dataclass
class Check:
    type: str
    kind: str
    session: int
    compaction: int  # 1 = the session's first compaction
    age: int  # compactions since the one that covered the probe's block (0: the next context)
    visible: bool
    recoverable: bool
    by_search: bool
    by_read: bool
    action_visible: bool | None = None  # artifacts: a line with the path and the action
    probe: Probe | None = None


@dataclass
class SessionResult:
    number: int
    kind: str
    phrasing: str
    turns: int
    blocks: int
    compactions: int
    history_tokens: int  # every block written, as stored (what an uncompacted context would hold)
    final_render_tokens: int
    summary_tokens: list[int] = field(default_factory=list)  # the history part of each summary
    split_tokens: list[int] = field(default_factory=list)
    renders_over_max: int = 0
    checks: list[Check] = field(default_factory=list)
    summaries: list[str] = field(default_factory=list)
    summarizers: list[str] = field(default_factory=list)  # who wrote each summary (fallbacks show)
    seconds: float = 0.0
    judge_sample: JudgeSample | None = None


@dataclass(frozen=True)
class JudgeSample:
    """A check point kept for ``--judge``: the render the agent got, everything written before it,
    and the probes due there."""

    compacted: str
    full: str
    probes: tuple[Probe, ...]


class ApiError(RuntimeError):
    pass


class _Api:
    def __init__(self, client: Client, conv: str):
        self.client = client
        self.base = f"{API}/{conv}"

    def post(self, sub: str, body: dict[str, Any]) -> Any:
        response = self.client.post(
            f"{self.base}/{sub}/", data=json.dumps(body), content_type="application/json"
        )
        if response.status_code not in (200, 201):
            raise ApiError(f"POST {sub}: {response.status_code} {response.content[:300]!r}")
        return response.json()

    def get(self, sub: str, params: dict[str, str]) -> tuple[int, Any]:
        response = self.client.get(f"{self.base}/{sub}/", params)
        return response.status_code, response.json()


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _round_blocks(turn: Turn, k: int, rnd: Round, ts: str) -> list[dict[str, Any]]:
    call_id = f"tc_{turn.turn_id}_{k}"
    meta = {"tool_call_id": call_id, "tool_id": rnd.tool_id}
    result = rnd.result if isinstance(rnd.result, str) else json.dumps(rnd.result, sort_keys=True)
    return [
        {
            "type": "react.notes",
            "author": "react",
            "turn_id": turn.turn_id,
            "ts": ts,
            "text": rnd.note,
            "meta": meta,
        },
        {
            "type": "react.tool.call",
            "author": "react",
            "turn_id": turn.turn_id,
            "ts": ts,
            "mime": "application/json",
            "text": json.dumps({"tool_id": rnd.tool_id, "tool_call_id": call_id, "params": rnd.params}),
            "meta": meta,
        },
        {
            "type": "react.tool.result",
            "author": "tool",
            "turn_id": turn.turn_id,
            "ts": ts,
            "mime": rnd.mime,
            "text": result,
            "meta": {**meta, "status": rnd.status},
        },
    ]


def render_text(render: dict[str, Any]) -> str:
    """The text the agent gets: every text part of the render (anthropic format), in order."""
    return "\n".join(str(part.get("text", "")) for part in render["blocks"] if part.get("type") == "text")


class SessionRun:
    """One session against the API; ``probe_seq`` maps each planted probe to its block's seq."""

    def __init__(self, api: _Api, session: Session, settings: QualitySettings, *, keep_texts: bool = False):
        self.api = api
        self.keep_texts = keep_texts
        self.transcript: list[str] = []
        self.session = session
        self.settings = settings
        self.seq_of: dict[tuple[int, str], tuple[int, str]] = {}  # (turn, role) -> (seq, path)
        self.tokens_written = 0
        self.results: list[tuple[int, str]] = []  # (turn index, path) of hideable tool results
        self.compactions = 0
        self.first_covered: dict[int, int] = {}  # id(probe) -> compaction number that covered it
        self.recoverable: dict[int, tuple[bool, bool]] = {}
        self.out = SessionResult(
            number=session.number,
            kind=session.kind,
            phrasing=session.phrasing,
            turns=0,
            blocks=0,
            compactions=0,
            history_tokens=0,
            final_render_tokens=0,
        )

    def _stored(self, index: int, roles: list[str], blocks: list[dict[str, Any]]) -> None:
        for role, block in zip(roles, blocks, strict=True):
            self.seq_of[(index, role)] = (block["seq"], block["path"])
            self.tokens_written += block["tokens"]
            if self.keep_texts:
                self.transcript.append(f"[{block['type']}] {block['path']}\n{block['text']}")
            self.out.blocks += 1

    def play_turn(self, turn: Turn, rng_pick: Callable[[list[tuple[int, str]]], tuple[int, str]]) -> None:
        ts = turn.ts
        if turn.hide_earlier:
            candidates = [r for r in self.results if turn.index - 6 <= r[0] < turn.index]
            if candidates:
                _, path = rng_pick(candidates)
                self.api.post(
                    "hide",
                    {"path": path, "replacement_text": "Large listing hidden by the agent; read it by path."},
                )
        stored = self.api.post(
            "turns",
            {
                "turn_id": turn.turn_id,
                "prompt": turn.prompt,
                "ts": _iso(ts),
                "attachments": [{"name": a.name, "mime": a.mime, "text": a.text} for a in turn.attachments],
            },
        )["blocks"]
        self._stored(
            turn.index, ["header", "prompt", *(f"attachment:{a.name}" for a in turn.attachments)], stored
        )
        if turn.plan is not None:
            block = {
                "type": "react.plan",
                "author": "react",
                "turn_id": turn.turn_id,
                "ts": _iso(ts),
                "mime": "application/json",
                "path": f"ar:{turn.turn_id}.react.plan",
                "text": json.dumps(turn.plan, sort_keys=True),
            }
            self._stored(turn.index, ["plan"], self.api.post("blocks", {"blocks": [block]})["blocks"])
        for k, rnd in enumerate(turn.rounds):
            ts = ts + timedelta(seconds=turn.round_seconds)
            rows = self.api.post("blocks", {"blocks": _round_blocks(turn, k, rnd, _iso(ts))})["blocks"]
            self._stored(turn.index, [f"notes:{k}", f"call:{k}", f"result:{k}"], rows)
            if rnd.hideable:
                self.results.append((turn.index, rows[2]["path"]))
        render = self.api.post("render", {"now": _iso(ts + timedelta(seconds=2))})
        total = render["tokens"]["total"]
        if total > self.settings.max_tokens:
            self.out.renders_over_max += 1
        self.out.final_render_tokens = total
        self.out.history_tokens = self.tokens_written
        if render["compaction"] is not None:
            self.compactions += 1
            self._check(turn.index, render_text(render))
        completion = {
            "type": "assistant.completion",
            "author": "assistant",
            "turn_id": turn.turn_id,
            "ts": _iso(ts + timedelta(seconds=turn.round_seconds)),
            "text": turn.completion,
        }
        self._stored(turn.index, ["completion"], self.api.post("blocks", {"blocks": [completion]})["blocks"])
        self.out.turns += 1

    # ---------------------------------------------------------------- checks

    def _summary(self) -> tuple[int, str, str]:
        conversation = Conversation.objects.get(public_id=self.api.base.rsplit("/", 1)[-1])
        row = (
            Compaction.objects.filter(timeline__conversation=conversation, status=Compaction.Status.APPLIED)
            .select_related("summary_block")
            .order_by("-id")
            .first()
        )
        assert row is not None and row.first_retained_seq is not None and row.summary_block is not None
        return row.first_retained_seq, row.summary_block.text, row.summarizer

    def _due(self, index: int, first_retained: int) -> list[Probe]:
        planted = [p for p in self.session.probes if p.origin in self.seq_of and p.origin[0] <= index]
        compacted = [p for p in planted if self.seq_of[p.origin][0] < first_retained]
        due: list[Probe] = []
        latest_request = [p for p in planted if p.type == LATEST_REQUEST][-1:]
        # The newest plan block written (a plan whose steps are all done plants no probe, and the
        # steps an older version of it listed as pending are done now).
        latest_plan_turn = max((i for i, role in self.seq_of if role == "plan" and i <= index), default=None)
        for p in compacted:
            if p.type == INSTRUCTION:
                due.append(p)
            elif p.type == LATEST_REQUEST:
                if p in latest_request:
                    due.append(p)
            elif p.type == PENDING_STEP:
                if p.origin[0] == latest_plan_turn:
                    due.append(p)
            else:
                first = self.first_covered.setdefault(id(p), self.compactions)
                if self.compactions - first < HORIZON:
                    due.append(p)
        return due

    def _check(self, index: int, text: str) -> None:
        first_retained, summary, summarizer = self._summary()
        self.out.summarizers.append(summarizer)
        history, _, split = summary.partition(SPLIT_HEADING)
        self.out.summary_tokens.append(count_text_tokens(history.rstrip()))
        if split:
            self.out.split_tokens.append(count_text_tokens(SPLIT_HEADING + split))
        self.out.summaries.append(summary)
        due = self._due(index, first_retained)
        if self.keep_texts:
            self.out.judge_sample = JudgeSample(text, "\n\n".join(self.transcript), tuple(due))
        for probe in due:
            visible = all(value in text for value in probe.values)
            action_visible = None
            if probe.type == ARTIFACT:
                action_visible = any(
                    probe.values[0] in line and probe.action in line for line in text.splitlines()
                )
            if id(probe) not in self.recoverable:
                self.recoverable[id(probe)] = self._recoverable(probe)
            by_search, by_read = self.recoverable[id(probe)]
            self.out.checks.append(
                Check(
                    type=probe.type,
                    kind=probe.kind,
                    session=self.session.number,
                    compaction=self.compactions,
                    age=self.compactions - self.first_covered.setdefault(id(probe), self.compactions),
                    visible=visible,
                    recoverable=by_search or by_read,
                    by_search=by_search,
                    by_read=by_read,
                    action_visible=action_visible,
                    probe=probe,
                )
            )

    def _read(self, path: str) -> str:
        status, body = self.api.get("blocks", {"path": path, "include_hidden": "1"})
        if status != 200:
            return ""
        # What reading a block by path shows: its text and its meta (a tool call's parameters, where
        # an artifact it wrote is named), as the API answers them.
        return "\n".join(
            b["text"]
            + ("\n" + json.dumps(b["meta"], ensure_ascii=False, sort_keys=True) if b.get("meta") else "")
            for b in body.get("blocks", [])
        )

    def _recoverable(self, probe: Probe) -> tuple[bool, bool]:
        """(found through search, found by reading the block it was planted in by path)."""
        by_search = True
        for value in probe.values:
            status, body = self.api.get("search", {"q": value[:500]})
            hits = body.get("results", []) if status == 200 else []
            if not any(value in hit["snippet"] or value in self._read(hit["path"]) for hit in hits[:5]):
                by_search = False
                break
        _, path = self.seq_of[probe.origin]
        stored = self._read(path) if path else ""
        if path.endswith(".call"):  # a tool call's round: what it wrote is named in its result too
            stored += "\n" + self._read(path.removesuffix(".call") + ".result")
        if probe.values == (path,):  # an attachment: its path reads back
            return by_search, self.api.get("blocks", {"path": path})[0] == 200
        return by_search, all(value in stored for value in probe.values)


def run_session(
    client: Client,
    session: Session,
    settings: QualitySettings,
    *,
    keep_texts: bool = False,
    keep_summaries: bool = False,
) -> SessionResult:
    started = time.perf_counter()
    response = client.post(
        f"{API}/",
        data=json.dumps(
            {"title": f"quality {session.kind} {session.number}", "settings": settings.as_settings()}
        ),
        content_type="application/json",
    )
    if response.status_code != 201:
        raise ApiError(f"create: {response.status_code} {response.content[:300]!r}")
    run = SessionRun(_Api(client, response.json()["id"]), session, settings, keep_texts=keep_texts)
    picker = session.gen.rng

    def pick(items: list[tuple[int, str]]) -> tuple[int, str]:
        return items[picker.randrange(len(items))]

    for turn in list(session.turns):
        run.play_turn(turn, pick)
    extra = 0
    while run.compactions < 2 and extra < MAX_EXTRA_TURNS:
        run.play_turn(session.extra_turn(), pick)
        extra += 1
    run.out.compactions = run.compactions
    run.out.seconds = time.perf_counter() - started
    if not keep_summaries:
        run.out.summaries = run.out.summaries[-1:]  # the last one, for a look at what a summary keeps
    return run.out
