"""Every URL family answers malformed and edge-case identifiers exactly as pinned.

Each family (the conversation, its contexts, every sub-path under ``main`` and under a named
context, one compaction, one render's usage) is requested with each identifier in it replaced by a
table of edge cases (longest allowed, one too long, a bad first character, uppercase, dots, a
hyphen, unicode, percent-escapes, the trailing slash missing) with every method; the status and
the error code of each answer must equal the pinned table ``identifier_urls.txt`` beside this file.
The identifier regexes and the URL converters built from them live once
(timeline_app/domain/identifiers.py): this pins that moving them changed no answer.

The table was written from the answers before the converters existed; after an intended change of
the contract, rewrite it with ``TIMELINE_REPIN_URLS=1`` and read the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from rest_framework.throttling import ScopedRateThrottle

from timeline_app.services.conversations import conversation_create, timeline_get_or_create

pytestmark = pytest.mark.django_db

PINNED = Path(__file__).with_name("identifier_urls.txt")
METHODS = ("get", "head", "options", "post", "put", "patch", "delete")

CONV = "c1"
LONG_CONV = "C" + "a.b-c_d" * 9  # 64 characters: the longest id, with dots, hyphens, underscores
CONTEXT = "notes"
LONG_CONTEXT = "n" + "a_b0" * 15 + "xyz"  # 64 characters
COMPACTION = "cmp_0123456789abcdef"  # well formed, stored nowhere
RENDER = "rnd_" + "A-b_" * 7  # 28 characters after the prefix: the longest, stored nowhere

CONV_CASES = {
    "ok": CONV,
    "longest": LONG_CONV,
    "missing": "c2.x-y_z",
    "too long": LONG_CONV + "a",
    "underscore first": "_c1",
    "dot first": ".c1",
    "hyphen first": "-c1",
    "dot": ".",
    "dots": "..",
    "unicode": "c\u00e9",
    "space": "c%201",
    "escaped slash": "c%2F1",
    "colon": "c:1",
}
CONTEXT_CASES = {
    "ok": CONTEXT,
    "longest": LONG_CONTEXT,
    "main": "main",
    "missing": "other_2",
    "too long": LONG_CONTEXT + "a",
    "uppercase": "Notes",
    "digit first": "1notes",
    "underscore first": "_notes",
    "dot": "no.tes",
    "hyphen": "no-tes",
    "unicode": "not\u00e9s",
}
COMPACTION_CASES = {
    "ok": COMPACTION,
    "short": COMPACTION[:-1],
    "long": COMPACTION + "0",
    "uppercase hex": COMPACTION.upper().replace("CMP_", "cmp_"),
    "not hex": "cmp_0123456789abcdeg",
    "prefix": "CMP_0123456789abcdef",
    "no prefix": "0123456789abcdef",
}
RENDER_CASES = {
    "ok": RENDER,
    "shortest": "rnd_a",
    "empty": "rnd_",
    "too long": RENDER + "a",
    "dot": "rnd_a.b",
    "prefix": "RND_abc",
    "unicode": "rnd_\u00e9",
}

SUB_PATHS = (
    "blocks/",
    "turns/",
    "render/",
    "compact/",
    "compactions/",
    "compactions/{compaction}/",
    "hide/",
    "unhide/",
    "search/",
    "sources/",
    "timeline/",
    "messages/",
    "messages/pop/",
    "renders/{render}/usage/",
    "usage/",
)
FAMILIES = (
    "conversations/{conv}/",
    "conversations/{conv}/contexts/",
    "conversations/{conv}/contexts/{context}/",
    "conversations/{conv}/full-context/",
    *(f"conversations/{{conv}}/{sub}" for sub in SUB_PATHS),
    *(f"conversations/{{conv}}/contexts/{{context}}/{sub}" for sub in SUB_PATHS),
)
CASES = {"conv": CONV_CASES, "context": CONTEXT_CASES, "compaction": COMPACTION_CASES, "render": RENDER_CASES}
# Only these methods reach an existing object (a DELETE of the conversation would erase it).
SAFE = ("get", "head", "options")


def _urls(family: str) -> list[tuple[str, tuple[str, ...]]]:
    """The family's URLs: each identifier in turn over its cases (the others well formed), and
    each with its trailing slash missing; with the methods to send."""
    valid = {name: cases["ok"] for name, cases in CASES.items()}
    urls: list[tuple[str, tuple[str, ...]]] = []
    for name, cases in CASES.items():
        if "{" + name + "}" not in family:
            continue
        for case, value in cases.items():
            url = "/api/v1/" + family.format(**{**valid, name: value})
            stored = case in ("ok", "longest", "main") and name in ("conv", "context")
            reaches = stored and "{compaction}" not in family and "{render}" not in family
            urls.append((url, SAFE if reaches else METHODS))
    bare = "/api/v1/" + family.format(**valid)
    urls.append((bare.rstrip("/"), METHODS))
    return list(dict.fromkeys(urls))


def _answer(response) -> str:
    if (
        response.status_code >= 400
        and response.get("Content-Type") == "application/json"
        and response.content
    ):
        return f"{response.status_code}:{response.json()['error']['code']}"
    return str(response.status_code)


def _line(client, url: str, methods: tuple[str, ...]) -> str:
    answers = []
    for method in methods:
        send = getattr(client, method)
        response = send(url) if method in SAFE else send(url, {}, format="json")
        answers.append(f"{method.upper()}={_answer(response)}")
    return f"{url.encode('unicode_escape').decode()} {' '.join(answers)}"


def _pinned() -> dict[str, list[str]]:
    table: dict[str, list[str]] = {}
    family = ""
    for line in PINNED.read_text().splitlines():
        if line.startswith("# "):
            family = line[2:]
            table[family] = []
        elif line:
            table[family].append(line)
    return table


@pytest.fixture
def stored(owner, monkeypatch):
    # The answers pinned are the identifiers' (the compact throttle is tests/api/test_compact_throttle.py's):
    # a count left by another test in the same minute must not turn a pinned answer into a 429.
    monkeypatch.setattr(ScopedRateThrottle, "THROTTLE_RATES", {"compact": "100000/min"})
    for public_id in (CONV, LONG_CONV):
        conversation = conversation_create(tenant=owner.tenant, public_id=public_id)
        for name in (CONTEXT, LONG_CONTEXT):
            timeline_get_or_create(conversation=conversation, name=name)
    return owner


def _answers(client, family: str) -> list[str]:
    return [_line(client, url, methods) for url, methods in _urls(family)]


@pytest.mark.skipif(os.environ.get("TIMELINE_REPIN_URLS") != "1", reason="rewrites the pinned table")
@pytest.mark.parametrize("family", FAMILIES)
def test_repin(stored, family):
    table = _pinned() if PINNED.exists() else {}
    table[family] = _answers(stored.client, family)
    PINNED.write_text(
        "\n".join(f"# {name}\n" + "\n".join(table[name]) + "\n" for name in FAMILIES if name in table)
    )


@pytest.mark.parametrize("family", FAMILIES)
def test_each_identifier_edge_case_answers_as_pinned(stored, family):
    assert _answers(stored.client, family) == _pinned()[family]
