"""The compaction digest (pure): seed 002 "Compaction Digest".

A JSON-serialisable record of what a summary replaced, so an agent can find compacted blocks
again by path (``react.read``). It is cumulative: a new digest starts from the previous summary's
digest and adds the newly compacted blocks, without duplicates. Ordering is deterministic: lists
keep first-appearance order (the previous digest's entries first), ``tool_call_ids`` is sorted and
``tool_outputs`` keys are sorted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from timeline_app.domain.blocks import TOOL_RESULT, Block

JSON_MIME = "application/json"


def _str(value: Any, default: str = "") -> str:
    return value if isinstance(value, str) else default


def _str_list(value: Any) -> list[str]:
    if not isinstance(value, list):
        return []
    return [v for v in value if isinstance(v, str)]


def _dict_list(value: Any) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        return []
    return [dict(v) for v in value if isinstance(v, dict)]


def _sources_used(block: Block) -> list[Any]:
    value = block.meta.get("sources_used")
    return list(value) if isinstance(value, list) else []


def is_artifact(block: Block) -> bool:
    """A produced file (``fi:`` path) or a tool result that is not plain JSON data."""
    if block.path.startswith("fi:"):
        return True
    return block.type == TOOL_RESULT and block.mime != JSON_MIME


def tool_id_of(block: Block) -> str:
    return _str(block.meta.get("tool_id")) or "unknown"


def _hidden_key(entry: dict[str, Any]) -> tuple[Any, ...]:
    # One entry per hidden path (re-hiding replaces the text); path-less blocks by their text.
    path = entry.get("path")
    return (path,) if path else (path, _freeze(entry.get("replacement_text")))


class _Keyed:
    """An insertion-ordered list of dict entries, deduplicated by a key (later entries update)."""

    def __init__(self, key_fields: tuple[str, ...] = (), key: Callable[[dict[str, Any]], Any] | None = None):
        self._fields = key_fields
        self._key = key
        self._entries: dict[Any, dict[str, Any]] = {}

    def add(self, entry: dict[str, Any]) -> None:
        key = self._key(entry) if self._key else tuple(_freeze(entry.get(f)) for f in self._fields)
        if key in self._entries:
            self._entries[key].update(entry)
        else:
            self._entries[key] = entry

    def extend(self, entries: Iterable[dict[str, Any]]) -> None:
        for entry in entries:
            self.add(entry)

    def to_list(self) -> list[dict[str, Any]]:
        return list(self._entries.values())


def _freeze(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    return value


@dataclass(frozen=True)
class Digest:
    """A stored digest, read back: every key present with its type, malformed entries dropped."""

    artifacts: list[dict[str, Any]] = field(default_factory=list)
    tool_outputs: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    memsearch: list[dict[str, Any]] = field(default_factory=list)
    hidden: list[dict[str, Any]] = field(default_factory=list)
    tool_call_ids: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)


#: The digest's keys, in the order :func:`build_digest` writes them and the admin shows them.
DIGEST_KEYS = tuple(f.name for f in fields(Digest))


def read_digest(value: Any) -> Digest:
    """The one reader of ``meta.compaction_digest``: tolerant of a missing digest, missing keys and
    entries of the wrong type (a digest written by an older release or imported from a file)."""
    raw = value if isinstance(value, dict) else {}
    outputs = raw.get("tool_outputs")
    return Digest(
        artifacts=_dict_list(raw.get("artifacts")),
        tool_outputs={str(k): _dict_list(v) for k, v in outputs.items()} if isinstance(outputs, dict) else {},
        memsearch=_dict_list(raw.get("memsearch")),
        hidden=_dict_list(raw.get("hidden")),
        tool_call_ids=_str_list(raw.get("tool_call_ids")),
        paths=_str_list(raw.get("paths")),
    )


def build_digest(blocks: Sequence[Block], previous: dict[str, Any] | None = None) -> dict[str, Any]:
    """Digest of the compacted ``blocks``, merged with the ``previous`` summary's digest.

    * ``artifacts``: ``{path, mime, visibility, sources_used}`` for ``fi:`` blocks and tool results
      that are not ``application/json`` (deduplicated by path; the newest state wins);
    * ``tool_outputs``: ``{tool_id: [{tool_call_id, path, status}]}`` for tool results;
    * ``memsearch``: ``{tool_call_id, query, hits, paths}`` for results of a ``*memsearch*`` tool;
    * ``hidden``: ``{path, replacement_text, reason}`` for every hidden block;
    * ``tool_call_ids``: sorted, unique; ``paths``: every compacted block's path, unique.
    """
    prev = read_digest(previous)

    artifacts = _Keyed(("path",))
    artifacts.extend(prev.artifacts)
    outputs: dict[str, _Keyed] = {}
    for tool_id, entries in prev.tool_outputs.items():
        outputs.setdefault(tool_id, _Keyed(("tool_call_id", "path"))).extend(entries)
    memsearch = _Keyed(("tool_call_id", "paths", "query"))
    memsearch.extend(prev.memsearch)
    hidden = _Keyed(key=_hidden_key)
    hidden.extend(prev.hidden)
    tool_call_ids: set[str] = set(prev.tool_call_ids)
    paths: dict[str, None] = dict.fromkeys(prev.paths)

    for b in blocks:
        if b.path:
            paths.setdefault(b.path, None)
        tc = b.tool_call_id
        if tc:
            tool_call_ids.add(tc)
        if b.hidden:
            hidden.add({"path": b.path, "replacement_text": b.replacement_text, "reason": b.hidden_reason})
        if is_artifact(b):
            artifacts.add(
                {
                    "path": b.path,
                    "mime": b.mime,
                    "visibility": "hidden" if b.hidden else "visible",
                    "sources_used": _sources_used(b),
                }
            )
        if b.type == TOOL_RESULT:
            tool_id = tool_id_of(b)
            status = _str(b.meta.get("status")) or "ok"
            outputs.setdefault(tool_id, _Keyed(("tool_call_id", "path"))).add(
                {"tool_call_id": tc, "path": b.path, "status": status}
            )
            if "memsearch" in tool_id:
                hit_paths = _str_list(b.meta.get("paths"))
                hits = b.meta.get("hits")
                memsearch.add(
                    {
                        "tool_call_id": tc,
                        "query": _str(b.meta.get("query")),
                        "hits": hits
                        if isinstance(hits, int) and not isinstance(hits, bool)
                        else len(hit_paths),
                        "paths": hit_paths,
                    }
                )

    return {
        "artifacts": artifacts.to_list(),
        "tool_outputs": {k: outputs[k].to_list() for k in sorted(outputs)},
        "memsearch": memsearch.to_list(),
        "hidden": hidden.to_list(),
        "tool_call_ids": sorted(tool_call_ids),
        "paths": list(paths),
    }
