"""Score and survivors from `mutmut results --all true`: per area (pure core, scoping/auth)."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

AREAS = {
    "pure core": ("timeline_app.rendering.", "compaction."),
    "scoping/auth": ("timeline_app.api.auth.", "timeline_app.selectors.conversations."),
}


def main(path: str) -> int:
    rows = []
    for line in Path(path).read_text().splitlines():
        name, _, status = line.strip().rpartition(": ")
        if name:
            rows.append((name, status))
    for area, prefixes in AREAS.items():
        mine = [(n, s) for n, s in rows if n.startswith(prefixes)]
        counts = Counter(s for _, s in mine)
        tested = sum(counts.values()) - counts["no tests"] - counts["skipped"] - counts["not checked"]
        killed = counts["killed"] + counts["timeout"]
        score = 100.0 * killed / tested if tested else 0.0
        print(f"{area}: {killed}/{tested} killed ({score:.1f}%); {dict(counts)}")
        for name, status in mine:
            if status not in ("killed", "timeout", "not checked"):
                print(f"  {status}: {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
