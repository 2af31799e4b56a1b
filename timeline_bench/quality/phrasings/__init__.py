"""The phrasings ``bench quality`` draws its sessions from, as data (pure: no Django; seeded).

A **phrasing set** is a JSON file in this directory: the shape every kind shares (follow-ups,
plain completions, questions about an earlier identifier, the forms of a decision, how an error and
a file round look) and, per kind, the templates of its identifiers, listings, instructions,
requests, decisions, errors, file rounds, plan steps and attachments. Two sets ship:

* ``generated``: the templates the benchmark was written with (issue 24; moved here from code
  unchanged in substance): JSON tool results, errors as ``Error: <code>: <message>`` with the
  ``status: error`` flag, files passed to a tool as a ``path`` parameter;
* ``transcripts``: written independently (issue 37) in the style of public agent transcripts and
  tool output (shell, HTTP clients, cloud CLIs, test runners, SQL engines): plain-text results,
  errors as tools state them (an HTTP status line, a traceback, a failing test id, an exit code)
  mostly *without* the error flag, files named in the result text (``s3://…``, a path, a table).

A template is a string with ``{…}`` parts filled left to right from the session's random
generator: ``{int:A:B}`` (``{int:A:B:W}`` zero-padded to W digits), ``{hex:N}``, ``{alnum:N}``
(capitals and digits), ``{lower:N}`` (lower-case letters and digits), ``{upper:N}`` (capitals),
``{word}``, ``{Word}``, ``{name}``, ``{lname}``, ``{lang}``, ``{pick:a|b|c}``, and names given by
the caller (``{a}``, ``{b}``: a request's identifiers; ``{code}``, ``{path}``, ``{tool}``…);
``{{`` and ``}}`` are literal braces.
"""

from __future__ import annotations

import json
import random
import re
import string
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

DIRECTORY = Path(__file__).resolve().parent
SETS = ("generated", "transcripts")

_PART = re.compile(r"\{(\w+)(?::([^{}]*))?\}")
_HEX = "0123456789abcdef"
_ALNUM = string.ascii_uppercase + string.digits
_LOWER = string.ascii_lowercase + string.digits


@dataclass(frozen=True)
class Attachment:
    name: str
    mime: str
    text: str


@dataclass(frozen=True)
class ErrorRound:
    """A failing tool round: ``code`` (what must stay visible) occurs in ``result``."""

    code: str
    result: str
    status: str
    mime: str


@dataclass(frozen=True)
class FileRound:
    """A tool round that acts on a file: ``path`` with ``action`` (what a reader must see beside
    it), the call's parameters and the result."""

    tool: str
    path: str
    action: str
    params: dict[str, Any]
    result: Any
    mime: str
    note: str


class Filler:
    """Fills templates from one random generator and the set's shared word lists."""

    def __init__(self, rng: random.Random, words: dict[str, list[str]]):
        self.rng = rng
        self.words = words

    def _part(self, name: str, arg: str | None, given: dict[str, str]) -> str:
        r = self.rng
        if name in given:
            return given[name]
        args = arg.split(":") if arg else []
        if name == "int":
            value = r.randint(int(args[0]), int(args[1]))
            return f"{value:0{int(args[2])}d}" if len(args) > 2 else str(value)
        if name in ("hex", "alnum", "lower", "upper"):
            alphabet = {"hex": _HEX, "alnum": _ALNUM, "lower": _LOWER, "upper": string.ascii_uppercase}[name]
            return "".join(r.choice(alphabet) for _ in range(int(args[0])))
        if name == "pick":
            return r.choice((arg or "").split("|"))
        if name in ("word", "Word"):
            word = r.choice(self.words["words"])
            return word.capitalize() if name == "Word" else word
        if name in ("name", "lname"):
            first = r.choice(self.words["first_names"])
            return first.lower() if name == "lname" else first
        if name == "lang":
            return r.choice(self.words["languages"])
        raise KeyError(f"unknown template part {{{name}}}")

    def fill(self, template: str, **given: str) -> str:
        filled = _PART.sub(lambda m: self._part(m.group(1), m.group(2), given), template)
        return filled.replace("{{", "{").replace("}}", "}")

    def value(self, template: Any, **given: str) -> Any:
        """A JSON template filled: strings filled, a string that is one ``{int:…}`` an int."""
        if isinstance(template, str):
            whole = _PART.fullmatch(template)
            if whole is not None and whole.group(1) == "int":
                return int(self.fill(template, **given))
            return self.fill(template, **given)
        if isinstance(template, list):
            return [self.value(t, **given) for t in template]
        if isinstance(template, dict):
            return {k: self.value(v, **given) for k, v in template.items()}
        return template

    def one(self, templates: list[str], **given: str) -> str:
        return self.fill(self.rng.choice(templates), **given)


class Kind:
    """One kind of session of a phrasing set: its templates, filled with the session's generator."""

    def __init__(self, name: str, spec: dict[str, Any], shape: dict[str, Any], filler: Filler):
        self.name = name
        self.spec = spec
        self.shape = shape
        self.f = filler
        self.rng = filler.rng
        self.tools: tuple[str, ...] = tuple(spec["tools"])
        self.file_tools: tuple[dict[str, Any], ...] = tuple(spec.get("file_tools", ()))

    def identifier(self) -> str:
        return self.f.one(self.spec["identifiers"])

    def listing(self) -> Any:
        """A tool's listing of records full of other identifiers (JSON or text, as the set has it)."""
        listing = self.spec["listing"]
        count = self.rng.randint(*self.shape["listing_rows"])
        if isinstance(listing["row"], dict):
            return {
                "records": [self.f.value(listing["row"]) for _ in range(count)],
                "page": self.rng.randint(1, 9),
            }
        rows = [self.f.fill(listing["row"]) for _ in range(count)]
        return "\n".join([self.f.fill(listing.get("head", "")), *rows]).strip("\n")

    def instructions(self) -> list[str]:
        return [self.f.fill(t) for t in self.spec["instructions"]]

    def request(self, ids: list[str]) -> str:
        return self.f.one(self.spec["requests"], a=ids[0], b=ids[-1])

    def decision(self) -> tuple[str, str]:
        choice, reason = self.rng.choice(self.spec["decisions"])
        return self.f.fill(choice), self.f.fill(reason)

    def lookup(self) -> tuple[dict[str, Any], str]:
        """(a lookup's parameters, its note) — a search in ``generated``, a command in ``transcripts``."""
        params = self.f.value(self.rng.choice(self.spec["lookup_params"]))
        return params, self.f.one(self.shape["lookup_notes"])

    def match_result(self, listing: Any, identifier: str) -> Any:
        """A listing that also answers with ``identifier``."""
        if isinstance(listing, dict):
            return {**listing, "match": identifier}
        return listing + "\n" + self.f.one(self.spec["match_lines"], id=identifier)

    def error(self) -> ErrorRound:
        entry = self.rng.choice(self.spec["errors"])
        code = self.f.fill(entry["code"])
        message = self.f.fill(entry.get("message", ""))
        result = self.f.fill(entry.get("result", self.shape["error_result"]), code=code, message=message)
        status = entry.get("status", self.shape["error_status"])
        return ErrorRound(code, result, status, entry.get("mime", "text/plain"))

    def file_round(self) -> FileRound:
        tool = self.rng.choice(self.file_tools)
        path = self.f.one(tool.get("paths", self.spec.get("file_paths", [])))
        given = {"path": path, "tool": tool["tool"]}
        params = self.f.value(tool.get("params", {"path": "{path}"}), **given)
        if "result" in tool:
            result: Any = self.f.fill(tool["result"], **given)
        else:
            listing = self.listing()
            result = {"path": path, "ok": True, "bytes": self.rng.randint(200, 90000), **listing}
        note = self.f.fill(tool.get("note", self.shape["file_note"]), **given)
        mime = "application/json" if isinstance(result, dict) else "text/plain"
        return FileRound(tool["tool"], path, tool["action"], params, result, mime, note)

    def step(self, ids: list[str]) -> str:
        return self.f.one(self.spec["steps"], a=ids[0], b=ids[-1])

    def attachment(self) -> Attachment:
        spec = self.rng.choice(self.spec["attachments"])
        name = self.f.fill(spec["name"])
        lines = [self.f.fill(spec["line"]) for _ in range(self.rng.randint(*spec["lines"]))]
        body = spec.get("head", "") + spec.get("joiner", "\n").join(lines)
        return Attachment(name, spec["mime"], body)


@dataclass(frozen=True)
class PhrasingSet:
    name: str
    shape: dict[str, Any]
    words: dict[str, list[str]]
    kinds: dict[str, dict[str, Any]]

    def kind(self, name: str, rng: random.Random) -> Kind:
        return Kind(name, self.kinds[name], self.shape, Filler(rng, self.words))


@cache
def load(name: str) -> PhrasingSet:
    """The phrasing set ``name`` (one of :data:`SETS`), read from ``<name>.json``."""
    if name not in SETS:
        raise ValueError(f"unknown phrasing set {name!r}; known: {', '.join(SETS)}")
    data = json.loads((DIRECTORY / f"{name}.json").read_text(encoding="utf-8"))
    return PhrasingSet(name=name, shape=data["shape"], words=data["words"], kinds=data["kinds"])
