"""Score and survivors from `mutmut results --all true`: per area (pure core, scoping/auth).

``--markdown`` prints, for docs/testing.md, a table of each module's score and the surviving
mutants grouped by function (``function: 3, 7, 12``) instead of one line per survivor.
"""

from __future__ import annotations

import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

AREAS = {
    "pure core": ("timeline_app.rendering.", "compaction."),
    "scoping/auth": ("timeline_app.api.auth.", "timeline_app.selectors.conversations."),
}
KILLED = ("killed", "timeout")
UNTESTED = ("no tests", "skipped", "not checked")
_NAME = re.compile(r"^(?P<module>[\w.]+?)\.x(?:_|ǁ)(?P<function>.+)__mutmut_(?P<number>\d+)$")


def _rows(path: str) -> list[tuple[str, str]]:
    rows = []
    for line in Path(path).read_text().splitlines():
        name, _, status = line.strip().rpartition(": ")
        if name:
            rows.append((name, status))
    return rows


def _score(rows: list[tuple[str, str]]) -> tuple[int, int, Counter[str]]:
    counts = Counter(s for _, s in rows)
    tested = sum(counts.values()) - sum(counts[s] for s in UNTESTED)
    return sum(counts[s] for s in KILLED), tested, counts


def _parts(name: str) -> tuple[str, str, int]:
    match = _NAME.match(name)
    if match is None:
        return name, name, 0
    function = match["function"].replace("ǁ", ".").strip(".")
    return match["module"], function, int(match["number"])


def plain(rows: list[tuple[str, str]]) -> None:
    for area, prefixes in AREAS.items():
        mine = [(n, s) for n, s in rows if n.startswith(prefixes)]
        killed, tested, counts = _score(mine)
        score = 100.0 * killed / tested if tested else 0.0
        print(f"{area}: {killed}/{tested} killed ({score:.1f}%); {dict(counts)}")
        for name, status in mine:
            if status not in (*KILLED, "not checked"):
                print(f"  {status}: {name}")


def markdown(rows: list[tuple[str, str]]) -> None:
    by_module: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for name, status in rows:
        by_module[_parts(name)[0]].append((name, status))
    print("| module | killed / tested | score | no tests |")
    print("|---|---|---|---|")
    for module in sorted(by_module):
        killed, tested, counts = _score(by_module[module])
        score = f"{100.0 * killed / tested:.1f} %" if tested else "–"
        print(f"| `{module}` | {killed} / {tested} | {score} | {counts['no tests']} |")
    survivors: dict[tuple[str, str], list[int]] = defaultdict(list)
    for name, status in rows:
        if status == "survived":
            module, function, number = _parts(name)
            survivors[(module, function)].append(number)
    print()
    for (module, function), numbers in sorted(survivors.items()):
        print(f"* `{module}.{function}`: {', '.join(str(n) for n in sorted(numbers))}")


def main(argv: list[str]) -> int:
    args = [a for a in argv if not a.startswith("--")]
    rows = _rows(args[0])
    (markdown if "--markdown" in argv else plain)(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
