"""What the extractive summarizer takes from one block (pure): the user's standing instructions,
the assistant's decisions (their cue rules: ``cues``), a plan's pending steps, the files a block
touches, errors and the key identifiers."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Sequence
from typing import Any

from compaction.summary import cues, sections, shapes
from timeline_app.domain.blocks import ASSISTANT_COMPLETION, TOOL_CALL, TOOL_RESULT, USER_ATTACHMENT, Block
from timeline_app.domain.text import ellipsize, one_line

LINE_CHARS = 600  # one extracted line at most
_SENTENCE_CHARS = 300
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
# "ok", "Sure," run into the next sentence without a full stop: "ok Use the fiscal year…".
_ACK_OPENER = re.compile(
    r"^(?:(?i:ok|okay|yes|yep|sure|thanks|fine|great|good|perfect|alright)[,!]?\s+)+(?=[A-Z])"
)
_DONE = frozenset({"done", "completed", "complete", "skipped", "cancelled", "canceled", "finished"})
_STEP_TEXT_KEYS = ("text", "title", "step", "description", "name", "task")
ARTIFACT_LINE = re.compile(r"^- `([^`]+)`")


def first_sentence(text: str) -> str:
    flat = one_line(text, LINE_CHARS)
    match = _SENTENCE_END.search(flat)
    return flat[: match.start()] if match else flat


def _sentences(text: str) -> list[str]:
    """The sentences of ``text``: a line break ends one too ("fix the build\nOnly touch staging.")."""
    out: list[str] = []
    budget = 4 * LINE_CHARS
    for line in text.splitlines():
        flat = one_line(line, budget)
        out.extend(s for s in _SENTENCE_END.split(flat) if s.strip())
        budget -= len(flat) + 1
        if budget <= 0:
            break
    return out


def constraint_sentences(text: str) -> list[str]:
    """The sentences of a user's text that state a standing instruction or limit, verbatim (see
    :func:`compaction.summary.cues.is_constraint_sentence`). An acknowledgement run into the next
    sentence ("ok Use the fiscal year starting in July.") is a sentence of its own."""
    sentences = _sentences(text)
    opener = _ACK_OPENER.match(sentences[0]) if sentences else None
    if opener is not None:
        sentences[:1] = [sentences[0][: opener.end()].rstrip(), sentences[0][opener.end() :]]
    return [
        ellipsize(s, _SENTENCE_CHARS) for i, s in enumerate(sentences) if cues.is_constraint_sentence(s, i)
    ]


def decision_sentences(text: str) -> list[str]:
    """The sentences of an assistant's text that give a reason or say what it chose or did (see
    :func:`compaction.summary.cues.is_decision_sentence`)."""
    return [
        ellipsize(s, _SENTENCE_CHARS)
        for i, s in enumerate(_sentences(text))
        if cues.is_decision_sentence(s, i)
    ]


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def pending_steps(block: Block) -> list[str] | None:
    """The steps not done of a ``react.plan`` block (JSON ``{"steps": [...]}``, each step a string
    or an object with a text and a ``status``/``done``); None when the block holds no plan."""
    data = _json(visible_text(block))
    steps = data.get("steps") if isinstance(data, dict) else data if isinstance(data, list) else None
    if not isinstance(steps, list):
        return None
    out: list[str] = []
    for step in steps:
        if isinstance(step, str):
            out.append(one_line(step, _SENTENCE_CHARS))
            continue
        if not isinstance(step, dict):
            continue
        text = next((step[k] for k in _STEP_TEXT_KEYS if isinstance(step.get(k), str)), "")
        status = step.get("status")
        done = step.get("done") is True or (isinstance(status, str) and status.lower() in _DONE)
        if text.strip() and not done:
            out.append(one_line(text, _SENTENCE_CHARS))
    return out


# A tool parameter under one of these names holds a file whatever its extension ("notebooks/x.ipynb").
_FILE_KEYS = re.compile(
    r"^(path|paths|file|files|filename|file_?path|file_?name|src|dest|destination|output|input)$", re.I
)
_PATH_VALUE = re.compile(r"^[\w.\-@+~/\\]+$")


def _file_values(value: Any, depth: int = 0, *, named: bool = False) -> list[str]:
    if isinstance(value, str):
        if sections.is_file_name_or_path(value):
            return [value]
        named_file = named and 3 <= len(value) <= 200 and _PATH_VALUE.match(value) is not None
        return [value] if named_file and ("/" in value or "." in value) else []
    if depth >= 2:
        return []
    if isinstance(value, dict):
        return [
            f
            for k, v in value.items()
            for f in _file_values(v, depth + 1, named=isinstance(k, str) and _FILE_KEYS.match(k) is not None)
        ]
    if isinstance(value, list):
        return [f for v in value[:20] for f in _file_values(v, depth + 1, named=named)]
    return []


# The verbs of tool ids (``fs.write``, ``docs.save_itinerary``) and what they did to a file.
_TOOL_VERBS = {
    "read": "read",
    "write": "written",
    "edit": "edited",
    "save": "saved",
    "download": "downloaded",
    "upload": "uploaded",
    "export": "exported",
    "import": "imported",
    "create": "created",
    "delete": "deleted",
    "copy": "copied",
    "move": "moved",
    "append": "appended",
    "open": "opened",
    "load": "loaded",
    "extract": "extracted",
    "render": "rendered",
}
_TOOL_ID_WORDS = re.compile(r"[A-Za-z]+")


@functools.lru_cache(maxsize=256)
def tool_action(tool_id: str) -> str:
    """What a tool did to the files among its parameters, in words a reader and a model take at
    once: the past participle of the tool id's verb, then the id (``written, fs.write``); the id
    alone when it has no verb we know."""
    for word in _TOOL_ID_WORDS.findall(tool_id):
        done = _TOOL_VERBS.get(word.lower())
        if done is not None:
            return f"{done}, {tool_id}"
    return tool_id


def artifacts_of(block: Block) -> list[tuple[str, str]]:
    """``(path, action)`` of the files a block touches: an attachment is ``attached``; a tool call
    acts on the file paths among its parameters (a file name with a known extension, a path, or any
    path-like value under a key such as ``path`` or ``file``; the action: :func:`tool_action`); a
    tool's result or the assistant's text on the objects, files and tables a line names with an
    action verb (``upload: ./x.parquet to s3://bucket/x.parquet``: see
    :func:`compaction.summary.shapes.artifacts_in_text`)."""
    if block.type == USER_ATTACHMENT and block.path:
        return [(block.path, "attached")]
    if block.type in (TOOL_RESULT, ASSISTANT_COMPLETION):
        found = shapes.artifacts_in_text(block.text)  # a pruned result's preview may cut the line
        return [(block.path, "produced"), *found] if block.path.startswith("fi:") else found
    if block.type != TOOL_CALL:
        return [(block.path, "produced")] if block.path.startswith("fi:") else []
    data = _json(block.text)
    params = data.get("params", data) if isinstance(data, dict) else None
    tool_id = block.meta.get("tool_id") or (data.get("tool_id") if isinstance(data, dict) else "")
    action = tool_action(tool_id) if isinstance(tool_id, str) and tool_id else "tool call"
    return [(path, action) for path in dict.fromkeys(_file_values(params))]


def salient_texts(block: Block) -> tuple[str, str]:
    """(the text whose identifiers matter, the listing text) of a block: a JSON tool result's
    arrays (records of a listing) are the listing, its other values the answer."""
    text = visible_text(block)
    if block.type == USER_ATTACHMENT:  # a file's content (a table, a list): like a tool's listing
        return "", text
    if block.type != TOOL_RESULT or block.hidden:
        return text, ""
    if not text.lstrip().startswith("{"):
        return text_listing(text)
    data = _json(text)
    if not isinstance(data, dict):
        return text, ""
    answer = {k: v for k, v in data.items() if not isinstance(v, list)}
    listing = {k: v for k, v in data.items() if isinstance(v, list)}
    return json.dumps(answer, ensure_ascii=False), json.dumps(listing, ensure_ascii=False) if listing else ""


def error_of(block: Block) -> str | None:
    """The line that states the error a block reports, or None: a tool result flagged
    ``status: error`` (its error line, else its start) or whose stored text has an error's shape (see
    :data:`compaction.summary.shapes.ERROR_RULES`); an assistant's text with a strong shape
    (an HTTP status, an exception, a failing test, a non-zero exit)."""
    # The stored text, not a pruned or hidden block's preview: it may cut the line that says it
    # (a traceback's last line); the block is compacted either way.
    text = block.text
    if block.type == TOOL_RESULT or block.meta.get("status") == "error":
        line = shapes.error_line(text)
        if line is None and block.meta.get("status") == "error":
            return one_line(text, 120) if text.strip() else "error"
        return line
    if block.type == ASSISTANT_COMPLETION:
        return shapes.error_line(text, shapes.STRONG_ERROR_RULES)
    return None


_ROW_WORD = re.compile(r"[^\W_]+")
_MIN_ROWS = 3


def _row_shape(line: str) -> str:
    return " ".join(_ROW_WORD.sub("w", line).split())


def text_listing(text: str) -> tuple[str, str]:
    """(the answer, the listing) of a plain-text tool result: lines that share their shape (words
    and numbers alike, whitespace collapsed) with at least two others are the rows of a listing —
    ``kubectl get pods``, a SQL result, pytest's PASSED lines, JSON lines —; the other lines (a
    header, a ``key: value`` line, the one line that answers) are what the tool said."""
    if text.count("\n") < _MIN_ROWS:
        return text, ""
    lines = text.splitlines()
    shapes_of = [_row_shape(line) for line in lines]
    seen: dict[str, int] = {}
    for shape in shapes_of:
        seen[shape] = seen.get(shape, 0) + 1
    answer = [line for line, shape in zip(lines, shapes_of, strict=True) if seen[shape] < _MIN_ROWS]
    if len(answer) == len(lines):
        return text, ""
    rows = [line for line, shape in zip(lines, shapes_of, strict=True) if seen[shape] >= _MIN_ROWS]
    return "\n".join(answer), "\n".join(rows)


def is_error(block: Block) -> bool:
    return error_of(block) is not None


def estimate_tokens(line: str) -> int:
    # About 4 characters per token for English prose; paths and ids are denser, so the rendered
    # result is always verified with the real tokenizer (and the budget tightened when needed).
    return len(line) // 4 + 1


def visible_text(block: Block) -> str:
    return block.replacement_text if block.hidden else block.text


def identifier_lines(
    blocks: Sequence[Block], previous: Sequence[str] = (), found: Sequence[Sequence[str]] | None = None
) -> list[str]:
    """The "Key identifiers" lines: every identifier of the previous lines and of the blocks' texts
    (hidden ones: their replacement text), best ranked first (see
    :func:`compaction.summary.sections.rank_identifiers`; the previous summary counts as the oldest
    text). A previous line is kept verbatim, at the rank of its best identifier. ``found``: the
    identifiers of each block's visible text when the caller has them already."""
    per_block = found if found is not None else [sections.identifiers_in(visible_text(b)) for b in blocks]
    ranked = sections.rank_identifier_lists([sections.identifiers_in("\n".join(previous)), *per_block])
    line_of: dict[str, str] = {}
    for line in previous:
        for token in sections.identifiers_in(line):
            line_of.setdefault(token, line)
    out: dict[str, None] = {}
    for token in ranked:
        out.setdefault(line_of.get(token, f"- {token}"), None)
    for line in previous:  # lines without a recognisable identifier keep their place at the end
        out.setdefault(line, None)
    return list(out)
