"""Errors and artifacts recognised by their shape in tool output and assistant text (pure).

Tools rarely say "error": an HTTP client prints a status line, Python a traceback, a test runner
``FAILED <test id>``, a shell ``exit status 137``; a cloud CLI names the object it wrote
(``upload: ./x.parquet to s3://bucket/x.parquet``), a SQL engine the table. Each rule below is one
named predicate (a line in, a yes or the things it names out), listed in :data:`ERROR_RULES`,
:data:`STRONG_ERROR_RULES` and :data:`ARTIFACT_RULES`, so a rule is added, tested and removed on
its own (tests/compaction/summary/test_shapes.py pins one sample per rule that only that rule knows).

Cost: a text is split into lines only when it holds a hint of a rule (a plain substring), and only
its first :data:`_HEAD_LINES` and last :data:`_TAIL_LINES` lines are read.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from compaction.summary import sections

_HEAD_LINES = 200
_TAIL_LINES = 60
ERROR_LINE_CHARS = 160

# --------------------------------------------------------------------------------------------
# Errors: each rule says whether one line states an error.

_HTTP_STATUS = re.compile(
    r"\bHTTP(?:/[\d.]+)?\s+[45]\d\d\b"  # HTTP/1.1 502 …, HTTP 502 from billing-api
    r"|\bHTTPError\s*[45]\d\d\b"
    r"|\b[45]\d\d\s+(?:Bad Request|Unauthorized|Payment Required|Forbidden|Not Found|Method Not Allowed|"
    r"Conflict|Gone|Unprocessable|Too Many Requests|Internal Server Error|Bad Gateway|Service Unavailable|"
    r"Gateway Timeout)\b"
    r"|^curl: \(\d+\)"
)
_EXCEPTION = re.compile(
    r"(?:^|[\s(\"'])(?:[a-z_][\w]*\.)*[A-Z]\w*(?:Error|Exception|Fault)\b(?=[:)\s]|$)"
    r"|^panic: "
)
_FAILING_TEST = re.compile(r"^\s*(?:FAILED|FAIL:?|ERROR)\s+\S+|^\s*--- FAIL: |^\s*[✕✗×] ")
_NONZERO_EXIT = re.compile(
    r"\b(?:exit(?:ed)?(?: with)?(?: status| code)?|exit status|returned non-zero exit status|"
    r"exit code|status code)[:=]?\s*[1-9]\d*\b",
    re.IGNORECASE,
)
# Case matters: "FAILED <test id>" is the test runner's (``failing_test``), "AccessDenied" and
# "AuthorizationFailed" a cloud API's code.
_FAILURE_WORD = re.compile(
    r"(?:[dD]enied|DENIED|[fF]ailed|[fF]ailure|timed out|[tT]imeout|TIMEOUT|[rR]efused|[fF]orbidden|"
    r"[aA]borted|deadline exceeded|[nN]o space left|not found|does not exist)\b"
    r"|\bKilled\b|\b(?:[eE]rror|ERROR|ERR)\b|\bFATAL\b|^fatal: "
)


def http_error_status(line: str) -> bool:
    """An HTTP status of 400 or more as clients print it: ``HTTP/1.1 502 Bad Gateway``, ``HTTP
    502 from billing-api (upstream timeout)``, ``HTTPError 403``, ``curl: (28) …``."""
    return _HTTP_STATUS.search(line) is not None


def exception_name(line: str) -> bool:
    """An exception's name, as the last line of a traceback or a log states it:
    ``IndexError: list index out of range``, ``java.lang.NullPointerException: …``, ``panic: …``."""
    return _EXCEPTION.search(line) is not None


def failing_test(line: str) -> bool:
    """A test runner's failure line: ``FAILED tests/x.py::test_y - …``, ``--- FAIL: TestY``."""
    return _FAILING_TEST.search(line) is not None


def nonzero_exit(line: str) -> bool:
    """A process that ended with a non-zero status: ``exit status 137``, ``exited with code 2``."""
    return _NONZERO_EXIT.search(line) is not None


def failure_word(line: str) -> bool:
    """A line a tool uses to say something failed, without a shape of its own: ``Permission
    denied (publickey)``, ``… timed out after 30s``, ``ERROR:  relation … does not exist``,
    ``Killed``, ``npm ERR! …``. Only for tool output: in the assistant's prose these words are
    as often about something that did not fail."""
    return _FAILURE_WORD.search(line) is not None


LineRule = Callable[[str], bool]
#: The rules for an assistant's text: shapes prose does not take by accident.
STRONG_ERROR_RULES: tuple[LineRule, ...] = (http_error_status, exception_name, failing_test, nonzero_exit)
#: The rules for a tool's output.
ERROR_RULES: tuple[LineRule, ...] = (*STRONG_ERROR_RULES, failure_word)

# What a text must hold (lower-cased) for a rule to have a chance: searched for as plain
# substrings, which costs a fraction of a regular expression with alternatives per character.
_ERROR_HINTS = (
    "err",
    "exception",
    "fault",
    "fail",
    "exit",
    "panic",
    "curl",
    "http",
    "denied",
    "timeout",
    "timed out",
    "refused",
    "forbidden",
    "abort",
    "deadline",
    "space left",
    "not found",
    "not exist",
    "killed",
    "fatal",
    "unauthorized",
    "bad request",
    "bad gateway",
    "unavailable",
    "too many",
    "conflict",
    "gone",
    "unprocessable",
    "not allowed",
    "payment required",
    "status code",
    "✕",
    "✗",
    "×",
)


def _has_hint(text: str, hints: Sequence[str]) -> bool:
    lowered = text.lower()
    return any(hint in lowered for hint in hints)


def _lines(text: str) -> list[str]:
    lines = text.splitlines()
    if len(lines) > _HEAD_LINES + _TAIL_LINES:
        lines = lines[:_HEAD_LINES] + lines[-_TAIL_LINES:]
    return lines


def error_line(text: str, rules: Sequence[LineRule] = ERROR_RULES) -> str | None:
    """The first line of ``text`` that one of ``rules`` calls an error (whitespace collapsed, at
    most :data:`ERROR_LINE_CHARS` characters), or None."""
    if not _has_hint(text, _ERROR_HINTS):
        return None
    for raw in _lines(text):
        line = " ".join(raw.split())
        if line and any(rule(line) for rule in rules):
            return line if len(line) <= ERROR_LINE_CHARS else line[: ERROR_LINE_CHARS - 1] + "…"
    return None


# --------------------------------------------------------------------------------------------
# Artifacts: each rule gives the artifacts one line names; a line names an artifact a tool acted
# on when it also holds an action verb (the verb, as written, is the action).

# A verb standing as a word, not inside a path or a file name ("./deploy.sh", "exports/").
_ACTION = re.compile(
    r"(?<![\w./\-])(?i:upload(?:ed|ing|s)?|download(?:ed|ing|s)?|cop(?:y|ied|ying|ies)|wr(?:ite|ote|itten|iting|ites)|"
    r"sav(?:e|ed|ing|es)|export(?:ed|ing|s)?|import(?:ed|ing|s)?|creat(?:e|ed|ing|es)|delet(?:e|ed|ing|es)|"
    r"remov(?:e|ed|ing|es)|insert(?:ed|ing|s)?|mov(?:e|ed|ing|es)|renam(?:e|ed|ing|es)|"
    r"generat(?:e|ed|ing|es)|publish(?:ed|ing|es)?|push(?:ed|ing|es)?|load(?:ed|ing|s)?|dump(?:ed|ing|s)?|"
    r"archiv(?:e|ed|ing|es)|append(?:ed|ing|s)?|truncat(?:e|ed|ing|es)|drop(?:ped|ping|s)?|"
    r"updat(?:e|ed|ing|es)|modif(?:y|ied|ies)|edit(?:ed|ing|s)?|read(?:ing|s)?|extract(?:ed|ing|s)?|"
    r"replac(?:e|ed|ing|es)|overwr(?:ite|ote|itten|iting)|restor(?:e|ed|ing|es)|stor(?:e|ed|ing|es)|"
    r"deploy(?:ed|ing|s)?|sent|attach(?:ed|ing|es)?)(?![\w/\-]|\.\w)"
)
_OBJECT_STORE_URL = re.compile(r"\b(?:s3a?|gs|az|abfss?|wasbs?|hdfs|oss|r2)://[^\s'\"<>()\[\]{},;]+")
_FILE_URL = re.compile(r"\bfile://[^\s'\"<>()\[\]{},;]+")
_HTTPS_FILE_URL = re.compile(r"\bhttps?://[^\s'\"<>()\[\]{},;]+/[\w.\-]+\.[A-Za-z0-9]{1,8}\b")
_PATH_WORD = re.compile(r"(?<![\w:/.~])(?:~/|\.{1,2}/|/)?[\w.\-@+]+(?:/[\w.\-@+]+)*")
_TABLE = re.compile(r"\b(?i:table|into|from|to table)\s+[\"`]?([A-Za-z_][\w$]*\.[A-Za-z_][\w$]*)")
_BUCKET = re.compile(r"\b(?:make_bucket|bucket|container)[:\s]+[\"'`]?([a-z0-9][a-z0-9.\-]{2,62})\b")
# A JSON document's start; "[pruned after cache expiry] …" is text.
_JSON_START = re.compile(r"\s*(?:\{|\[\s*(?:[\[{\"\]\d\-]|true|false|null))")
_ARTIFACT_HINTS = ("/", "table", "into", "from", "bucket", "container")
_TRAILING = ".,:;!?'\")]}"


def object_store_url(line: str) -> list[str]:
    """``s3://``, ``gs://``, ``az://``, ``abfss://``… URLs: objects in a bucket or container."""
    return [m.group().rstrip(_TRAILING) for m in _OBJECT_STORE_URL.finditer(line)]


def file_url(line: str) -> list[str]:
    """``file://`` URLs."""
    return [m.group().rstrip(_TRAILING) for m in _FILE_URL.finditer(line)]


def https_file_url(line: str) -> list[str]:
    """``https://…/<file>.<ext>``: a download or an upload, not a page (an extension we know)."""
    out = []
    for m in _HTTPS_FILE_URL.finditer(line):
        url = m.group().rstrip(_TRAILING)
        if sections.is_file_name_or_path(url.rsplit("/", 1)[-1]):
            out.append(url)
    return out


def file_path(line: str) -> list[str]:
    """File paths in a line (``/var/backups/x.tar.gz``, ``./out/x.csv``, ``reports/x.xml``; see
    :func:`compaction.summary.sections.is_file_name_or_path`), URLs left out."""
    without_urls = re.sub(r"\b[a-z][a-z0-9+.\-]*://\S+", " ", line)
    return [
        word
        for word in (m.group().rstrip(_TRAILING) for m in _PATH_WORD.finditer(without_urls))
        if "/" in word and sections.is_file_name_or_path(word)
    ]


def written_table(line: str) -> list[str]:
    """A ``schema.table`` after ``table``, ``into`` or ``from``: ``rows inserted into
    analytics.daily_revenue``, ``table staging.orders created``."""
    return [m.group(1) for m in _TABLE.finditer(line)]


def bucket_name(line: str) -> list[str]:
    """A bucket or container a tool names: ``make_bucket: acme-exports``."""
    return [m.group(1) for m in _BUCKET.finditer(line)]


ArtifactRule = Callable[[str], list[str]]
ARTIFACT_RULES: tuple[ArtifactRule, ...] = (
    object_store_url,
    file_url,
    https_file_url,
    file_path,
    written_table,
    bucket_name,
)


def artifacts_in_text(text: str, rules: Sequence[ArtifactRule] = ARTIFACT_RULES) -> list[tuple[str, str]]:
    """``(artifact, action)`` for each line of ``text`` that names an artifact (per ``rules``) and
    an action verb; a JSON document is left to its structure (see ``extract.artifacts_of``). The
    same artifact met again: its last action."""
    if _JSON_START.match(text) is not None or not _has_hint(text, _ARTIFACT_HINTS):
        return []
    found: dict[str, str] = {}
    for line in _lines(text):
        verb = _ACTION.search(line)
        if verb is None:
            continue
        named: dict[str, None] = {}
        for rule in rules:
            for artifact in rule(line):
                named.setdefault(artifact, None)
        for artifact in named:
            found.pop(artifact, None)
            found[artifact] = verb.group()
    return list(found.items())
