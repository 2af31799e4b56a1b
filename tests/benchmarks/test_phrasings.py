"""bench quality's phrasing sets as data (issue 37): every template of both sets fills, the same
seed gives the same sessions, and the probes' strings are in the blocks they were planted in."""

from __future__ import annotations

import random
from typing import Any

import pytest

from timeline_bench.quality.phrasings import _PART, SETS, Filler, load
from timeline_bench.quality.sessions import ARTIFACT, ERROR, generate


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    return []


@pytest.mark.parametrize("name", SETS)
def test_every_template_of_a_set_fills(name: str) -> None:
    phrasings = load(name)
    filler = Filler(random.Random(0), phrasings.words)
    given = {k: "X" for k in ("a", "b", "code", "message", "path", "tool", "id", "ref", "c", "r")}
    for kind in phrasings.kinds.values():
        for template in _strings(kind):
            filled = filler.fill(template, **given)  # an unknown part raises KeyError
            assert _PART.search(filled) is None, (name, template, filled)


def test_the_template_parts() -> None:
    filler = Filler(random.Random(1), {"words": ["ledger"], "first_names": ["Ana"], "languages": ["Dutch"]})
    assert (
        filler.fill("INV-{int:7:7:4} {word} {Word} {name} {lname} {lang} {pick:x}")
        == "INV-0007 ledger Ledger Ana ana Dutch x"
    )
    assert filler.fill('{{"id": "{hex:0}{a}"}}', a="q") == '{"id": "q"}'
    assert filler.value({"n": "{int:3:3}", "s": "n{int:3:3}"}) == {"n": 3, "s": "n3"}


@pytest.mark.parametrize("name", SETS)
def test_sessions_are_seeded_and_probes_stand_in_their_blocks(name: str) -> None:
    first = generate(seed=7, sessions=5, max_turns=40, phrasing=name)
    again = generate(seed=7, sessions=5, max_turns=40, phrasing=name)
    assert [t.prompt for s in first for t in s.turns] == [t.prompt for s in again for t in s.turns]
    for session in first:
        assert session.phrasing == name
        for probe in session.probes:
            turn = session.turns[probe.origin[0]]
            role = probe.origin[1]
            if probe.type == ERROR:
                rnd = turn.rounds[int(role.split(":")[1])]
                assert probe.values[0] in rnd.result
            elif probe.type == ARTIFACT and role.startswith("call:"):
                rnd = turn.rounds[int(role.split(":")[1])]
                text = rnd.result if isinstance(rnd.result, str) else str(rnd.params)
                assert probe.values[0] in text and (name == "generated" or probe.action in text)
