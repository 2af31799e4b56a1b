"""The extractive summary's lines by section and how they are cut to ``max_tokens`` (pure)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from compaction.summary import sections
from compaction.summary.cues import is_clear_constraint, is_follow_up
from compaction.summary.extract import ARTIFACT_LINE, artifacts_of, estimate_tokens
from timeline_app.domain.blocks import Block
from timeline_app.domain.tokens import count_text_tokens

# What the summary keeps when it must drop lines (most needed last), see ``drop_sequence``:
# 0. the constraints without a cue word, or naming an identifier, beyond a fifth of the budget
#    (newest first; a request naming an identifier is no constraint: see
#    ``extract.constraint_sentences``);
# 1. paths and tool call ids (the digest keeps every one, and search finds them), then progress
#    lines taken from this range's completions and "Critical context";
# 2. identifiers met only inside a tool result's listings (arrays of records), lowest ranked first;
# 3. the older requests;
# 4. the recent working state, oldest first whatever its section: decisions, errors, artifacts,
#    the other identifiers, earlier summaries' progress lines;
# 5. the active plan's pending steps, the latest requests, the constraints and, last of all, the
#    very first request: the conversation's original goal.
_RECENT_REQUESTS = 5  # a request is often followed by a few short questions about it
_CUELESS_SHARE = 0.2
PREVIOUS_AGE = -(10**9)  # lines of the previous summary are older than any block


def protected_requests(goals: Sequence[str]) -> list[int]:
    """Indices of the requests dropped last: the latest few that are not follow-ups (the first
    request is apart), oldest first."""
    out: list[int] = []
    for i in range(len(goals) - 1, 0, -1):
        if len(out) == _RECENT_REQUESTS:
            break
        if not is_follow_up(goals[i]):
            out.append(i)
    return out[::-1]


@dataclass
class Lines:
    """Summary lines by section, each with an age (the seq of the block it came from; lines of
    the previous summary are older than any block)."""

    lines: dict[str, list[str]]
    ages: dict[str, list[int]]
    # Where each line of a section is, for :meth:`add` (a list search made long histories quadratic).
    _at: dict[str, dict[str, int]] = field(default_factory=dict)

    @classmethod
    def from_previous(cls, previous_summary: str | None) -> Lines:
        lines = sections.parse_sections(previous_summary or "")
        # A section lists its newest line last ("Key identifiers": first). A line's age is the
        # tokens between it and that end, so every section loses its oldest lines at the same rate.
        ages: dict[str, list[int]] = {}
        for key, kept in lines.items():
            newest_first = kept if key == sections.IDENTIFIERS.key else kept[::-1]
            distance, by_line = 0, []
            for line in newest_first:
                by_line.append(PREVIOUS_AGE - distance)
                distance += estimate_tokens(line)
            ages[key] = by_line if key == sections.IDENTIFIERS.key else by_line[::-1]
        return cls(lines, ages)

    def add(self, section: sections.Section, line: str, age: int) -> None:
        kept = self.lines[section.key]
        at = self._at.get(section.key)
        if at is None or len(at) != len(kept):  # first use, or the section was set from outside
            at = self._at[section.key] = {}
            for position, known in enumerate(kept):
                at.setdefault(known, position)
        i = at.get(line)
        if i is not None:  # met again: it is as recent as its latest mention
            self.ages[section.key][i] = max(self.ages[section.key][i], age)
            return
        at[line] = len(kept)
        kept.append(line)
        self.ages[section.key].append(age)

    def replace(self, section: sections.Section, lines: list[str], age: int) -> None:
        self.lines[section.key] = list(lines)
        self.ages[section.key] = [age] * len(lines)
        self._at.pop(section.key, None)


def artifact_lines(
    previous: list[str], previous_ages: list[int], blocks: Sequence[Block]
) -> tuple[list[str], list[int]]:
    """One line per file, ``- `path` — last action``, oldest first; a file met again moves down."""
    entries: dict[str, tuple[str, int]] = {}
    for line, age in zip(previous, previous_ages, strict=True):
        match = ARTIFACT_LINE.match(line)
        entries[match.group(1) if match else line] = (line, age)
    for b in blocks:
        for path, action in artifacts_of(b):
            entries.pop(path, None)
            where = f" ({b.path})" if b.path and b.path != path else ""
            entries[path] = (f"- `{path}` — {action}{where}", b.seq)
    ordered = sorted(entries.values(), key=lambda e: e[1])
    return [line for line, _ in ordered], [age for _, age in ordered]


def _constraints_over_share(constraints: Sequence[str], max_tokens: int) -> list[int]:
    """The constraint lines that are not clear (see :func:`is_clear_constraint`) beyond the oldest
    that fit in :data:`_CUELESS_SHARE` of the budget, newest first. Any sentence after a request
    may be one; the newest also stand in the latest requests, verbatim."""
    spent, over = 0, []
    for i, line in enumerate(constraints):
        if not is_clear_constraint(line):
            spent += estimate_tokens(line) + 1
            if spent > max_tokens * _CUELESS_SHARE:
                over.append(i)
    return over[::-1]


def drop_sequence(
    state: Lines, *, stated_identifiers: int, previous_progress: int, max_tokens: int
) -> list[tuple[str, int]]:
    """Lines in the order they are dropped (see the comment above ``_RECENT_REQUESTS``)."""
    lines, ages = state.lines, state.ages

    def oldest_first(section: sections.Section, indices: range | None = None) -> list[tuple[str, int]]:
        span = range(len(lines[section.key])) if indices is None else indices
        return sorted(((section.key, i) for i in span), key=lambda pair: ages[pair[0]][pair[1]])

    goals = sections.GOALS.key
    progress = sections.PROGRESS
    identifiers = sections.IDENTIFIERS.key
    recent = protected_requests(lines[goals])
    constraints = sections.CONSTRAINTS.key
    over = _constraints_over_share(lines[constraints], max_tokens)
    order = [(constraints, i) for i in over]
    order += oldest_first(sections.PATHS)
    order += oldest_first(progress, range(previous_progress, len(lines[progress.key])))
    order += oldest_first(sections.CRITICAL)
    order += [(identifiers, i) for i in range(len(lines[identifiers]) - 1, stated_identifiers - 1, -1)]
    order += [(goals, i) for i in range(1, len(lines[goals])) if i not in recent]
    pool = [
        *oldest_first(sections.DECISIONS),
        *oldest_first(sections.ERRORS),
        *oldest_first(sections.ARTIFACTS),
        *[(identifiers, i) for i in range(stated_identifiers)],
        *oldest_first(progress, range(previous_progress)),
    ]
    order += sorted(pool, key=lambda pair: ages[pair[0]][pair[1]])
    order += [(sections.NEXT_STEPS.key, i) for i in range(len(lines[sections.NEXT_STEPS.key]) - 1, -1, -1)]
    order += [(goals, i) for i in recent]
    order += [(constraints, i) for i in range(len(lines[constraints]) - 1, -1, -1) if i not in over]
    if lines[goals]:
        order.append((goals, 0))
    return order


def fit(
    title: str, lines: dict[str, list[str]], max_tokens: int, order: list[tuple[str, int]], *, level: int = 2
) -> str:
    """Drop lines (in ``order``, least needed first) until the rendered text fits ``max_tokens``."""
    kept = {key: [True] * len(section) for key, section in lines.items()}
    costs = {key: [estimate_tokens(line) + 1 for line in section] for key, section in lines.items()}
    estimate = estimate_tokens(title) + sum(sum(c) + 4 for c in costs.values() if c)

    def render() -> str:
        chosen = {
            key: [line for line, keep in zip(lines[key], kept[key], strict=True) if keep] for key in lines
        }
        return sections.render_sections(title, chosen, level=level)

    pos = 0
    budget = float(max_tokens)
    for _attempt in range(8):
        while pos < len(order) and estimate > budget:
            key, i = order[pos]
            kept[key][i] = False
            estimate -= costs[key][i]
            pos += 1
        text = render()
        actual = count_text_tokens(text)
        if actual <= max_tokens:
            return text
        if pos >= len(order):
            break
        # The estimate was optimistic for this text (dense paths and ids): tighten the budget.
        budget = min(budget, estimate) * max_tokens / actual * 0.95
    return truncate_to_tokens(render(), max_tokens)


def truncate_to_tokens(text: str, max_tokens: int) -> str:
    """The longest prefix of ``text`` (by characters, then binary search) within ``max_tokens``."""
    if count_text_tokens(text) <= max_tokens:
        return text
    lo, hi = 0, min(len(text), max(1, max_tokens) * 8)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if count_text_tokens(text[:mid] + "…") <= max_tokens:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo].rstrip() + "…" if lo else ""
