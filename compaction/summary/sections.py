"""The summary's structure (pure): one section list that both summarizers write and read back.

The extractive summarizer renders these sections; the Anthropic summarizer's prompt is built from
the same list, so a summary written by one can be folded into the next by the other without losing
a section. A split turn's prefix summary sits under :data:`SPLIT_TURN_HEADING` with its sections
one level down (``###``), so a summary has one heading per section and never two titles.

The "Key identifiers" section keeps the strings an agent needs verbatim after its blocks are
compacted (invoice and order numbers, ticket ids, transaction ids, error codes, file paths, URLs):
:func:`rank_identifiers` collects them deterministically, most referenced and most recent first.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Section:
    key: str
    title: str
    description: str
    aliases: tuple[str, ...] = ()

    @property
    def heading(self) -> str:
        return f"## {self.title}"


GOALS = Section(
    "goals",
    "Goals / requests",
    "what the user asked for, in their words where it matters; the first goal and the latest requests "
    "verbatim (not acknowledgements such as 'ok' or 'go on'; attached files go under Artifacts)",
)
CONSTRAINTS = Section(
    "constraints",
    "Constraints",
    "standing instructions, requirements, preferences and limits stated so far, each copied verbatim, "
    "also those without a word like always or never ('Use the fiscal year starting in July.'); "
    "they hold for the rest of the conversation",
)
PROGRESS = Section("progress", "Progress", "what has been done")
DECISIONS = Section("decisions", "Decisions", "choices made, each with its reason")
NEXT_STEPS = Section(
    "next_steps", "Next steps", "what remains to do: the active plan's pending steps, as written in the plan"
)
ARTIFACTS = Section(
    "artifacts",
    "Artifacts",
    "files read, written or attached, one per line: the exact path and the last action on it",
)
CRITICAL = Section(
    "critical",
    "Critical context",
    "other facts, numbers and names the agent must not lose",
    aliases=("Earlier context",),
)
ERRORS = Section("errors", "Errors", "errors met, with the path or tool call where each happened")
IDENTIFIERS = Section(
    "identifiers",
    "Key identifiers",
    "one per line, copied verbatim: invoice and order numbers, ticket ids, transaction ids, booking "
    "codes, DOIs, test ids, figure and table references, error codes, file paths and URLs the agent "
    "may need again",
)
PATHS = Section(
    "paths",
    "Paths and tool calls",
    "block paths (ar:…, fi:…, tc:…, su:…, so:…) and tool call ids (tc_…) worth reading back",
)

#: The one section list, in the order both summarizers write it.
SECTIONS: tuple[Section, ...] = (
    GOALS,
    CONSTRAINTS,
    PROGRESS,
    DECISIONS,
    NEXT_STEPS,
    ARTIFACTS,
    CRITICAL,
    ERRORS,
    IDENTIFIERS,
    PATHS,
)
SUMMARY_TITLE = "# Conversation summary"
SPLIT_TURN_HEADING = "## Turn Context (split turn)"

_BY_NAME = {name.lower(): s for s in SECTIONS for name in (s.title, *s.aliases)}
_HEADING = re.compile(r"^(#{1,4})\s+(.*?)\s*#*\s*$")


def section_list_text() -> str:
    """The sections as a prompt lists them: ``## <title> — <description>``, one per line."""
    return "\n".join(f"{s.heading} — {s.description}" for s in SECTIONS)


def _is_turn_context(name: str) -> bool:
    return name.lower().startswith("turn context")


def parse_sections(text: str) -> dict[str, list[str]]:
    """The non-empty lines of a summary by section key.

    A ``##`` or ``###`` heading naming a known section (or an alias) switches to it, so the
    sections of a split turn's prefix merge into the history's. Titles (``#``) and the split-turn
    heading are dropped; lines under another heading go to "Critical context", after a ``###``
    line naming that heading.
    """
    out: dict[str, list[str]] = {s.key: [] for s in SECTIONS}
    current = CRITICAL.key
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line.strip():
            continue
        match = _HEADING.match(line)
        if match is not None:
            level, name = len(match.group(1)), match.group(2)
            known = _BY_NAME.get(name.lower())
            if known is not None and level >= 2:
                current = known.key
                continue
            if level == 1 or _is_turn_context(name):
                current = CRITICAL.key
                continue
            if level == 2:
                current = CRITICAL.key
                out[current].append(f"### {name}")
                continue
        out[current].append(line)
    return out


def render_sections(title: str, lines: dict[str, list[str]], *, level: int = 2) -> str:
    """``title`` (left out when empty), then each non-empty section under its heading."""
    out: list[str] = [title] if title else []
    marks = "#" * level
    for s in SECTIONS:
        kept = lines.get(s.key) or []
        if kept:
            if out:
                out.append("")
            out.append(f"{marks} {s.title}")
            out.extend(kept)
    if not any(lines.get(s.key) for s in SECTIONS):
        out.extend(["", "(nothing to summarize)"] if out else ["(nothing to summarize)"])
    return "\n".join(out)


def split_turn_body(text: str) -> str:
    """A split turn's prefix summary as it goes under :data:`SPLIT_TURN_HEADING`: without its own
    title or turn-context heading, with its ``#``/``##`` headings moved down to ``###``."""
    lines: list[str] = []
    for raw in text.strip().splitlines():
        match = _HEADING.match(raw.rstrip())
        if match is not None:
            level, name = len(match.group(1)), match.group(2)
            if level == 1 or _is_turn_context(name):
                continue
            if level == 2:
                lines.append(f"### {name}")
                continue
        lines.append(raw.rstrip())
    while lines and not lines[0].strip():
        lines.pop(0)
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# Key identifiers

_STRIP = ".:!?*"
_BLOCK_PATH = re.compile(r"^(ar|fi|tc|su|so):")
_URL = re.compile(r"^https?://[^\s]+\.[^\s]+$")
_EMAIL = re.compile(r"^[\w.+\-]+@[\w\-]+(\.[\w\-]+)+$")
_SEGMENTED = re.compile(r"^[A-Za-z0-9]+(?:[-_.:#/][A-Za-z0-9]+)+$")
_SCREAMING = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")
_ALNUM = re.compile(r"^[A-Za-z0-9]{4,}$")
_CODE_LETTERS = re.compile(r"^[A-Z]{6,8}$")  # booking and record locators: GNIBPH, PNREXOSI
_DOI = re.compile(r"^10\.\d{4,9}/\S+$")
# Cloud resource names: ARNs (arn:aws:iam::123456789012:role/deploy) and prefixed random ids
# (cus_LORWHPRGVQBMWJ, whsec_Ab3…: a lower-case prefix, then eight or more letters and digits
# with a capital or a digit).
_ARN = re.compile(r"^arn:[\w\-]+:[\w\-]*:[\w\-]*:\d*:\S+$")
_PREFIXED_ID = re.compile(r"^[a-z]{2,8}_(?=[a-z0-9]*[A-Z0-9])[A-Za-z0-9]{8,}$")
_TEST_ID = re.compile(r"^[\w.\-/\\]+\.py::[\w\[\]\-.:]+$")  # pytest node ids: tests/x/test_y.py::test_z
# References written as two words: "Figure 3a", "Table 12", "Appendix B2".
_REFERENCE = re.compile(r"\b(?:Figure|Fig\.|Table|Chart|Exhibit|Appendix|Listing)\s+[A-Z]?\d+[a-z]?\b")
_UNIT = re.compile(r"^\d+[a-z]{1,3}$")  # 100ms, 24h, 10th: quantities, not identifiers
_DATE_TIME = re.compile(r"^\d{1,4}[-/:.]\d{1,2}([-/:.T]\d|$)")
_PATH_SEGMENT = re.compile(r"^[\w.\-@+]+$")
_DRIVE = re.compile(r"^[A-Za-z]:\\")
_FILE_EXTENSIONS = frozenset(
    re.findall(
        r"\w+",
        "py js ts tsx jsx json csv tsv pdf txt log md yaml yml toml ini cfg xml html sql sh go rs java "
        "rb php c h cpp png jpg jpeg gif webp svg docx xlsx pptx zip tar gz parquet ipynb xls ods odt "
        "rtf tex bib r rmd jsonl ndjson feather avro orc sqlite db pkl npy npz h5 kt swift scala",
    )
)
_MAX_CHARS_PER_TEXT = 100_000
_MAX_LENGTH = 200


def _has_digit(token: str) -> bool:
    return any(c.isdigit() for c in token)


def _has_letter(token: str) -> bool:
    return any(c.isalpha() for c in token)


def _has_extension(name: str) -> bool:
    stem, dot, extension = name.rpartition(".")
    return bool(dot) and _has_letter(stem) and extension.lower() in _FILE_EXTENSIONS


def _is_file_path(token: str) -> bool:
    absolute = token.startswith(("/", "~/", "./", "../")) or _DRIVE.match(token) is not None
    parts = [p for p in re.split(r"[/\\]", token) if p and p not in ("~", ".", "..")]
    if parts and _DRIVE.match(parts[0] + "\\"):
        parts = parts[1:]
    if not parts or not all(_PATH_SEGMENT.match(p) for p in parts) or not _has_letter(token):
        return False
    return _has_extension(parts[-1]) or len(parts) >= (2 if absolute else 3)


def is_identifier(token: str) -> bool:
    """Does ``token`` (one word of a block's text) look like an identifier worth keeping verbatim?

    Yes: URLs, e-mail addresses, DOIs, pytest node ids, file paths (absolute, or relative with an extension or three
    segments), file names with a known extension, ``#1234`` references, numbers of five digits or
    more, SCREAMING_SNAKE codes, locators of six to eight capitals (``GNIBPH``), and words of letters and digits (``INV-2024-0042``, ``E4021``,
    ``txn_8f3a2c91``). No: block paths and tool call ids (the paths section has them), dates and
    times, quantities like ``100ms``.
    """
    if not 3 <= len(token) <= _MAX_LENGTH or _BLOCK_PATH.match(token) or token.startswith("tc_"):
        return False
    if token.startswith(("http://", "https://")):
        return _URL.match(token) is not None
    if _DOI.match(token) or _TEST_ID.match(token) or _ARN.match(token) or _PREFIXED_ID.match(token):
        return True
    if "@" in token:
        return _EMAIL.match(token) is not None
    if "/" in token or "\\" in token:
        return _is_file_path(token)
    if token.startswith("#"):
        return token[1:].isdigit() and len(token) >= 4
    if token.isdigit():
        return len(token) >= 5
    if _SCREAMING.match(token) or _CODE_LETTERS.match(token):
        return True
    if _has_extension(token) and _PATH_SEGMENT.match(token):
        return True
    if not (_has_digit(token) and _has_letter(token)) or _DATE_TIME.match(token) or _UNIT.match(token):
        return False
    return _SEGMENTED.match(token) is not None or _ALNUM.match(token) is not None


def is_file_name_or_path(token: str) -> bool:
    """A file path (see :func:`is_identifier`) or a file name with a known extension."""
    if not 3 <= len(token) <= _MAX_LENGTH or _BLOCK_PATH.match(token) or "://" in token:
        return False
    if "/" in token or "\\" in token:
        return _is_file_path(token)
    return _has_extension(token) and _PATH_SEGMENT.match(token) is not None


# The words of a text (runs of characters between delimiters) less those that cannot be
# identifiers: a plain word (letters, a capital at most first, then only ``_STRIP`` punctuation)
# has none of the shapes of :func:`is_identifier` (each needs a digit, one of ``/ \\ @ # . _ :``
# inside, or six capitals). Skipping them in the regular expression, not in Python, makes prose
# cost one scan (``bench engine``: most of the extractive summary's time went to such words).
_DELIMITERS = r"\s,;()\[\]{}<>\"'`|="
_CANDIDATE = re.compile(
    rf"(?<![^{_DELIMITERS}])(?![A-Za-z]?[a-z]*[.:!?*]*(?![^{_DELIMITERS}]))[^{_DELIMITERS}]+"
)


@functools.lru_cache(maxsize=1 << 15)
def _identifier_or_empty(word: str) -> str:
    """``word`` stripped of ``_STRIP`` when it is an identifier, else ``""`` (cached: an agent's
    texts repeat their identifiers and the words around them)."""
    token = word.strip(_STRIP)
    return token if token and is_identifier(token) else ""


def identifiers_in(text: str) -> list[str]:
    """The identifiers of ``text`` in order of appearance (repeats included): the words
    :func:`is_identifier` accepts and two-word references ("Figure 3a", "Table 12")."""
    text = text[:_MAX_CHARS_PER_TEXT]
    found: list[tuple[int, str]] = []
    for match in _CANDIDATE.finditer(text):
        token = _identifier_or_empty(match.group())
        if token:
            found.append((match.start(), token))
    references = [(match.start(), match.group()) for match in _REFERENCE.finditer(text)]
    if references:
        found.extend(references)
        found.sort(key=lambda pair: pair[0])
    return [token for _, token in found]


def rank_identifiers(texts: Iterable[str]) -> list[str]:
    """Every identifier of ``texts`` (oldest text first) once, best first: the most referenced
    (occurrences in all texts), then the most recent (the latest text it occurs in), then the first
    seen. Deterministic."""
    return rank_identifier_lists(identifiers_in(text) for text in texts)


def rank_identifier_lists(found: Iterable[Sequence[str]]) -> list[str]:
    """:func:`rank_identifiers` of texts whose identifiers (:func:`identifiers_in`) are known."""
    count: dict[str, int] = {}
    last: dict[str, int] = {}
    for position, tokens in enumerate(found):
        for token in tokens:
            count[token] = count.get(token, 0) + 1
            last[token] = position
    first = {token: i for i, token in enumerate(count)}
    return sorted(count, key=lambda t: (-count[t], -last[t], first[t]))
