"""Compaction strategies of named message contexts (seed 004), pure: no Django, no I/O, no clock.

A strategy never deletes a stored message. It decides the context's *view*: which of the messages
since the last ``clear()`` are listed and rendered. The shell stores the history complete and
applies the strategy every time it reads the view, so changing a context's strategy (or going back
to ``summarize``) is always reversible.

Strategies (the stored config is ``Timeline.compaction_strategy``):

* ``{"name": "summarize"}`` (the default, also ``{}``): every message stays in the view; the
  seeds' compaction (cut point, ``conv.range.summary``) shortens what the model sees at render.
* ``{"name": "truncate_oldest", "max_messages": N}``: the newest messages, at most ``N``.
* ``{"name": "sliding_window", "window_size": N, "keep_system": true}``: the newest ``N``
  messages; with ``keep_system`` the ``N`` counts the system messages, all kept: every system
  message plus the newest ``N − #system`` others (a1's ``SlidingWindowCompact``).
* ``{"name": "<custom>", **params}``: a callable registered under that name by the shell.

Tool groups are never separated: an assistant message with ``tool_calls`` and the tool messages
answering those calls (and everything between them) form one *unit*; a view starts only at a unit
start and contains units whole. When the newest unit alone is longer than the budget, it is kept
whole (over budget) rather than split or dropped.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

SUMMARIZE = "summarize"
TRUNCATE_OLDEST = "truncate_oldest"
SLIDING_WINDOW = "sliding_window"
BUILTIN_STRATEGIES: tuple[str, ...] = (SUMMARIZE, TRUNCATE_OLDEST, SLIDING_WINDOW)

MAX_COUNT = 1_000_000
NAME_PATTERN = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
PARAM_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")

Message = Mapping[str, Any]
# A custom strategy: ``fn(messages, **params)`` returns the messages to keep, as indices into
# ``messages`` or as the message dicts themselves (matched by ``message_id``).
CustomStrategy = Callable[..., Iterable[Any]]


class StrategyError(ValueError):
    """An invalid strategy config, or a custom strategy that returned something unusable."""

    def __init__(self, details: dict[str, str]):
        super().__init__("; ".join(f"{k}: {v}" for k, v in details.items()))
        self.details = details


# --------------------------------------------------------------------------------------------
# Config
# --------------------------------------------------------------------------------------------


def _count(value: Any, key: str, errors: dict[str, str]) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= MAX_COUNT:
        errors[key] = f"must be an integer between 1 and {MAX_COUNT}"
        return 0
    return value


def normalize_strategy(raw: Any, *, custom_names: Collection[str] = ()) -> dict[str, Any]:
    """Check a strategy config from a client; return it normalised (defaults filled in).

    ``{}`` means ``summarize``. Unknown names and unknown or mistyped parameters are errors.
    """
    if not isinstance(raw, Mapping):
        raise StrategyError({"compaction_strategy": "must be an object"})
    if not raw:
        return {"name": SUMMARIZE}
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise StrategyError({"name": "required: a strategy name"})
    params = {k: v for k, v in raw.items() if k != "name"}
    errors: dict[str, str] = {}

    def reject_unknown(allowed: Collection[str]) -> None:
        for key in sorted(set(params) - set(allowed)):
            errors[key] = f"unknown parameter of {name}"

    out: dict[str, Any] = {"name": name}
    if name == SUMMARIZE:
        reject_unknown(())
    elif name == TRUNCATE_OLDEST:
        reject_unknown(("max_messages",))
        if "max_messages" not in params:
            errors["max_messages"] = "required"
        else:
            out["max_messages"] = _count(params["max_messages"], "max_messages", errors)
    elif name == SLIDING_WINDOW:
        reject_unknown(("window_size", "keep_system"))
        if "window_size" not in params:
            errors["window_size"] = "required"
        else:
            out["window_size"] = _count(params["window_size"], "window_size", errors)
        keep_system = params.get("keep_system", True)
        if not isinstance(keep_system, bool):
            errors["keep_system"] = "must be a boolean"
        out["keep_system"] = keep_system
    elif name in custom_names:
        for key, value in params.items():
            if not PARAM_PATTERN.match(key):
                errors[key] = "a parameter name is an identifier"
            out[key] = value
    else:
        known = sorted({*BUILTIN_STRATEGIES, *custom_names})
        errors["name"] = f"unknown strategy {name!r}; expected one of {', '.join(known)}"
    if errors:
        raise StrategyError(errors)
    return out


# --------------------------------------------------------------------------------------------
# Tool units
# --------------------------------------------------------------------------------------------


def _call_ids(message: Message) -> list[str]:
    calls = message.get("tool_calls")
    if message.get("role") != "assistant" or not isinstance(calls, list):
        return []
    return [c["id"] for c in calls if isinstance(c, Mapping) and isinstance(c.get("id"), str)]


def unit_starts(messages: Sequence[Message]) -> list[bool]:
    """``starts[i]``: may a view begin at message ``i`` without separating a tool group?

    A tool message spans back to the latest earlier assistant message that made its call (a tool
    message answering no known call spans back to the message just before it); no view may begin
    inside such a span. So a tool message never begins a view, except at index 0.
    """
    n = len(messages)
    blocked = [0] * (n + 1)  # difference array over "inside a span"
    last_call: dict[str, int] = {}
    for j, message in enumerate(messages):
        if message.get("role") == "assistant":
            for call_id in _call_ids(message):
                last_call[call_id] = j
        elif message.get("role") == "tool":
            answered = message.get("tool_call_id")
            start = last_call.get(answered, j - 1) if isinstance(answered, str) else j - 1
            if 0 <= start < j:
                blocked[start + 1] += 1
                blocked[j + 1] -= 1
    starts: list[bool] = []
    depth = 0
    for i in range(n):
        depth += blocked[i]
        starts.append(depth == 0)
    return starts


def units(messages: Sequence[Message]) -> list[range]:
    """The unsplittable runs of ``messages``, in order: each is a range of indices (none for no
    messages: index 0 starts a unit whenever there is one)."""
    starts = [i for i, s in enumerate(unit_starts(messages)) if s]
    ends = [*starts[1:], len(messages)] if starts else []
    return [range(a, b) for a, b in zip(starts, ends, strict=True)]


def widen_to_units(messages: Sequence[Message], kept: Iterable[int]) -> list[int]:
    """The sorted indices of every unit that contains at least one kept index."""
    wanted = set(kept)
    out: list[int] = []
    for unit in units(messages):
        if any(i in wanted for i in unit):
            out.extend(unit)
    return out


def _suffix_start(
    messages: Sequence[Message], budget: int, *, counted: Callable[[Message], bool] | None = None
) -> int:
    """The earliest unit start from which at most ``budget`` counted messages remain (every message
    counts unless ``counted`` says otherwise); the newest unit's start when even that unit holds
    more (a tool group is never split)."""
    n = len(messages)
    remaining = [0] * (n + 1)  # counted messages from i to the end
    for i in range(n - 1, -1, -1):
        remaining[i] = remaining[i + 1] + (1 if counted is None or counted(messages[i]) else 0)
    if remaining[0] <= budget:
        return 0
    starts = [i for i, s in enumerate(unit_starts(messages)) if s]
    fitting = [i for i in starts if remaining[i] <= budget]
    return fitting[0] if fitting else starts[-1]


def _is_system(message: Message) -> bool:
    return message.get("role") == "system"


# --------------------------------------------------------------------------------------------
# Strategies: each returns the kept indices, ascending
# --------------------------------------------------------------------------------------------


def summarize(messages: Sequence[Message]) -> list[int]:
    """Every message stays in the view; history is compacted into a summary at render time."""
    return list(range(len(messages)))


def truncate_oldest(messages: Sequence[Message], *, max_messages: int) -> list[int]:
    """The newest messages, at most ``max_messages`` (tool groups whole)."""
    return list(range(_suffix_start(messages, max_messages), len(messages)))


def sliding_window(messages: Sequence[Message], *, window_size: int, keep_system: bool = True) -> list[int]:
    """The newest ``window_size`` messages (tool groups whole).

    With ``keep_system`` (a1's ``SlidingWindowCompact``) the window counts the system messages it
    keeps: every system message, plus the newest ``window_size − #system`` other messages. When the
    system messages alone fill the window, the newest unit is kept anyway (as any view keeps it).
    """
    if not keep_system:
        return truncate_oldest(messages, max_messages=window_size)
    system = [i for i, m in enumerate(messages) if _is_system(m)]
    budget = window_size - len(system)
    start = _suffix_start(messages, budget, counted=lambda m: not _is_system(m))
    return widen_to_units(messages, [*system, *range(start, len(messages))])


def _custom_result(messages: Sequence[Message], result: Iterable[Any]) -> list[int]:
    by_id = {m.get("message_id"): i for i, m in enumerate(messages) if isinstance(m.get("message_id"), str)}
    kept: list[int] = []
    for item in result:
        if isinstance(item, int) and not isinstance(item, bool) and 0 <= item < len(messages):
            kept.append(item)
        elif isinstance(item, Mapping) and item.get("message_id") in by_id:
            kept.append(by_id[item["message_id"]])
        else:
            raise StrategyError({"result": f"not an index or a message of the input: {item!r:.80}"})
    return kept


def apply_strategy(
    messages: Sequence[Message],
    strategy: Mapping[str, Any],
    *,
    custom: Mapping[str, CustomStrategy] | None = None,
) -> list[int]:
    """The indices of ``messages`` in the view under ``strategy`` (a normalised config).

    A custom strategy gets a copy of the messages and the config's parameters as keyword
    arguments; its result is widened to whole tool units, so it cannot separate a tool call
    from its results either.
    """
    name = strategy.get("name", SUMMARIZE)
    params = {k: v for k, v in strategy.items() if k != "name"}
    if name == SUMMARIZE:
        return summarize(messages)
    if name == TRUNCATE_OLDEST:
        return truncate_oldest(messages, max_messages=int(params["max_messages"]))
    if name == SLIDING_WINDOW:
        return sliding_window(
            messages,
            window_size=int(params["window_size"]),
            keep_system=bool(params.get("keep_system", True)),
        )
    function = (custom or {}).get(str(name))
    if function is None:
        raise StrategyError({"name": f"unknown strategy {name!r}"})
    copies = [copy.deepcopy(dict(m)) for m in messages]
    return widen_to_units(messages, _custom_result(messages, function(copies, **params)))
