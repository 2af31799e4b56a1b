"""Generated sessions for ``bench quality`` (pure: no Django, no file writes; seeded).

A session is a sequence of turns an agent writes: a user prompt (a new request, a short follow-up
or a question), sometimes attachments, a plan, zero to four tool rounds (notes, call, result; some
fail), a completion, now and then a hide of an earlier tool result and a pause long enough for the
prompt cache to go cold (TTL pruning). Every value is drawn from the templates of a phrasing set
(:mod:`.phrasings`: data files, one per set) with random parts, and the structure (how many turns,
which turn holds what) is random too: the generator knows nothing about any summarizer.

While it writes a session the generator plants **probes**: the strings an agent needs later
(identifiers, standing instructions, the latest request, the active plan's pending steps,
artifacts, decisions with their reason, errors with where they happened). Each probe names the
block it was planted in (turn index and role), so the runner can tell when that block has been
compacted.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from timeline_bench.quality.phrasings import Attachment, load

PHRASINGS = ("generated", "transcripts")

IDENTIFIER = "identifier"
INSTRUCTION = "instruction"
LATEST_REQUEST = "latest_request"
PENDING_STEP = "pending_step"
ARTIFACT = "artifact"
DECISION = "decision"
ERROR = "error"
PROBE_TYPES = (IDENTIFIER, INSTRUCTION, LATEST_REQUEST, PENDING_STEP, ARTIFACT, DECISION, ERROR)

MIN_TURNS, MAX_TURNS = 40, 200
START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


@dataclass(frozen=True)
class Probe:
    """Something the agent needs later. ``values`` must all appear in the render for the probe to
    be visible; ``origin`` is ``(turn index, role)`` of the block it was planted in (``prompt``,
    ``completion``, ``plan``, ``attachment:<name>``, ``notes:<k>``, ``result:<k>``, ``call:<k>``).
    ``action`` (artifacts only) is the last thing done to the file."""

    type: str
    kind: str
    values: tuple[str, ...]
    origin: tuple[int, str]
    action: str = ""
    key: str = ""  # latest_request / pending_step: the request or plan it belongs to


@dataclass(frozen=True)
class Round:
    tool_id: str
    params: dict[str, Any]
    result: Any
    note: str
    status: str = "ok"
    mime: str = "application/json"
    hideable: bool = False  # a listing or a file's content: what an agent hides when it grows


@dataclass
class Turn:
    index: int
    turn_id: str
    ts: datetime
    prompt: str
    attachments: list[Attachment] = field(default_factory=list)
    plan: dict[str, Any] | None = None
    rounds: list[Round] = field(default_factory=list)
    completion: str = ""
    hide_earlier: bool = False  # hide a large earlier tool result before this turn's render
    round_seconds: int = 30


# --------------------------------------------------------------------------------------------
# The session generator


@dataclass
class Session:
    """One generated session: ``planned_turns`` turns are produced up front; :meth:`extra_turn`
    continues it (the runner asks when the planned turns compacted fewer than twice)."""

    number: int
    kind: str
    phrasing: str
    planned_turns: int
    turns: list[Turn]
    probes: list[Probe]
    gen: SessionGenerator

    def extra_turn(self) -> Turn:
        turn = self.gen.turn(len(self.turns))
        self.turns.append(turn)
        return turn


class SessionGenerator:
    def __init__(self, kind: str, rng: random.Random, number: int, phrasing: str = "generated"):
        self.kind = load(phrasing).kind(kind, rng)
        self.shape = self.kind.shape
        self.rng = rng
        self.number = number
        self.clock = START + timedelta(days=number)
        self.probes: list[Probe] = []
        self.known_ids: list[str] = []
        self.plan: dict[str, Any] | None = None
        self.plan_count = 0
        self.request_count = 0
        self.instructions = rng.sample(self.kind.instructions(), rng.randint(1, 3))
        self.instruction_turns = sorted(rng.sample(range(0, 5), len(self.instructions)))

    def _probe(self, type_: str, values: tuple[str, ...], origin: tuple[int, str], **kw: Any) -> None:
        self.probes.append(Probe(type=type_, kind=self.kind.name, values=values, origin=origin, **kw))

    def _new_ids(self, n: int) -> list[str]:
        return [self.kind.identifier() for _ in range(n)]

    def _plant_ids(self, index: int, role: str, ids: list[str], text: str) -> None:
        """Identifier probes for the new ``ids`` that ``text`` (the block's text) really holds."""
        for value in ids:
            if value in text and value not in self.known_ids:
                self.known_ids.append(value)
                self._probe(IDENTIFIER, (value,), (index, role))

    def turn(self, index: int) -> Turn:
        r = self.rng
        gap = r.randint(20, 240)
        if index and r.random() < 0.08:
            gap = r.randint(600, 5400)  # a pause: the prompt cache has gone cold
        self.clock += timedelta(seconds=gap)
        turn = Turn(index=index, turn_id=f"t{self.number:03d}_{index:03d}", ts=self.clock, prompt="")
        turn.round_seconds = r.randint(5, 60)
        parts: list[str] = []

        roll = r.random()
        is_request = index == 0 or roll < 0.3
        if is_request:
            ids = self._new_ids(2)
            request = self.kind.request(ids)
            self._plant_ids(index, "prompt", ids, request)
            parts.append(request)
            self.request_count += 1
            self._probe(LATEST_REQUEST, (request,), (index, "prompt"), key=f"r{self.request_count}")
        elif roll < 0.45 and self.known_ids:
            ref = r.choice(self.known_ids)
            parts.append(r.choice(self.shape["questions"]).replace("{ref}", ref))
        else:
            parts.append(r.choice(self.shape["follow_ups"]))
        for k, when in enumerate(self.instruction_turns):
            if when == index:
                parts.append(self.instructions[k])
                self._probe(INSTRUCTION, (self.instructions[k],), (index, "prompt"))
        turn.prompt = self.shape.get("prompt_joiner", " ").join(parts)

        if r.random() < 0.12:
            att = self.kind.attachment()
            turn.attachments.append(att)
            self._probe(
                ARTIFACT,
                (f"fi:{turn.turn_id}.user.attachments/{att.name}",),
                (index, f"attachment:{att.name}"),
                action="attached",
            )

        if is_request and r.random() < 0.5:
            self.plan_count += 1
            ids = self.known_ids[-2:] or self._new_ids(2)
            steps = list(dict.fromkeys(self.kind.step(ids) for _ in range(r.randint(3, 5))))
            self.plan = {
                "plan_id": f"plan_{self.plan_count}",
                "steps": [{"text": s, "status": "pending"} for s in steps],
            }
            turn.plan = json.loads(json.dumps(self.plan))
        elif self.plan is not None and r.random() < 0.4:
            pending = [s for s in self.plan["steps"] if s["status"] != "done"]
            if pending:
                pending[0]["status"] = "done"
                turn.plan = json.loads(json.dumps(self.plan))
        if turn.plan is not None:
            for step in turn.plan["steps"]:
                if step["status"] != "done":
                    self._probe(
                        PENDING_STEP, (step["text"],), (index, "plan"), key=f"{turn.plan['plan_id']}@{index}"
                    )

        rounds = r.choice([0, 1, 1, 2, 2, 3, 4])
        for k in range(rounds):
            turn.rounds.append(self._round(index, k))

        completion: list[str] = []
        if r.random() < 0.3:
            choice, reason = self.kind.decision()
            form = r.choice(self.shape["decision_forms"])
            completion.append(form.replace("{c}", choice).replace("{r}", reason))
            self._probe(DECISION, (choice, reason), (index, "completion"))
        if r.random() < 0.2:
            ids = self._new_ids(1)
            completion.append(r.choice(self.shape["mentions"]).replace("{id}", ids[0]))
            self._plant_ids(index, "completion", ids, completion[-1])
        completion.append(r.choice(self.shape["plain_completions"]))
        r.shuffle(completion)
        turn.completion = " ".join(completion)
        turn.hide_earlier = index > 3 and r.random() < 0.06
        return turn

    def _round(self, index: int, k: int) -> Round:
        r = self.rng
        roll = r.random()
        if roll < 0.15 and self.kind.file_tools:
            f = self.kind.file_round()
            self._probe(ARTIFACT, (f.path,), (index, f"call:{k}"), action=f.action)
            return Round(f.tool, f.params, f.result, f.note, mime=f.mime, hideable=True)
        tool_id = r.choice(self.kind.tools)
        params, note = self.kind.lookup()
        if roll < 0.25:
            error = self.kind.error()
            self._probe(ERROR, (error.code,), (index, f"result:{k}"))
            return Round(
                tool_id, params, error.result, self.shape["error_note"], status=error.status, mime=error.mime
            )
        result = self.kind.listing()
        if r.random() < 0.3:
            ids = self._new_ids(1)
            result = self.kind.match_result(result, ids[0])
            self._plant_ids(index, f"result:{k}", ids, ids[0])
            if r.random() < 0.5:
                note = r.choice(self.shape["match_notes"]).replace("{id}", ids[0])
        mime = "application/json" if isinstance(result, dict) else "text/plain"
        return Round(tool_id, params, result, note, mime=mime, hideable=True)


def kinds(phrasing: str = "generated") -> tuple[str, ...]:
    """The kinds of a phrasing set, in the order sessions take them."""
    return tuple(load(phrasing).kinds)


KINDS = kinds()


def generate(
    *, seed: int, sessions: int, max_turns: int | None = None, phrasing: str = "generated"
) -> list[Session]:
    """``sessions`` sessions of the phrasing set ``phrasing``, kinds in turn (so every kind gets its
    share), lengths and contents drawn from ``random.Random(seed)``: the same seed gives the same
    sessions. ``max_turns`` cuts each session's planned length (the runner still plays on until
    two compactions)."""
    out: list[Session] = []
    names = kinds(phrasing)
    for number in range(sessions):
        rng = random.Random(f"{seed}:{number}")
        kind = names[number % len(names)]
        gen = SessionGenerator(kind, rng, number, phrasing)
        planned = rng.randint(MIN_TURNS, MAX_TURNS)
        if max_turns is not None:  # a shorter subset (the test's): the same sessions, cut
            planned = min(planned, max_turns)
        turns = [gen.turn(i) for i in range(planned)]
        out.append(
            Session(
                number=number,
                kind=kind,
                phrasing=phrasing,
                planned_turns=planned,
                turns=turns,
                probes=gen.probes,
                gen=gen,
            )
        )
    return out
