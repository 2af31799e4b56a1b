"""The numbers of a ``bench quality`` run (pure): shares per probe type and kind, tokens, goals."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from timeline_bench.quality.runner import SessionResult
from timeline_bench.quality.sessions import PROBE_TYPES

#: The visible share each probe type must reach (issue 24 acceptance); every probe must also be
#: recoverable (by read-by-path or search) at 100 %.
GOALS: dict[str, float] = {
    "identifier": 0.98,
    "instruction": 1.0,
    "latest_request": 0.95,
    "pending_step": 0.95,
    "artifact": 1.0,
    "decision": 0.90,
    "error": 0.95,
}
REDUCTION_GOAL = 0.90
#: The share of artifact checks whose path and last action stand on one line (issue 37).
ACTION_GOAL = 0.90
#: Checked in the context after the compaction that covers them (the goal), and once more after the
#: next compaction (reported apart: what a second, progressive summary still carries).
ONE_OFF = ("identifier", "artifact", "decision", "error")


def _share(hits: int, total: int) -> float | None:
    return hits / total if total else None


def summarize(
    results: Sequence[SessionResult], *, summary_max_tokens: int, max_tokens: int
) -> dict[str, Any]:
    """Everything the table and ``--json`` show, from the per-session results."""
    kinds = list(dict.fromkeys(r.kind for r in results))
    probes: dict[str, dict[str, dict[str, Any]]] = {}
    for type_ in PROBE_TYPES:
        row: dict[str, dict[str, Any]] = {}
        for kind in ("all", *kinds):
            every = [c for r in results for c in r.checks if c.type == type_ and kind in ("all", c.kind)]
            checks = [c for c in every if c.age == 0] if type_ in ONE_OFF else every
            cell: dict[str, Any] = {
                "checks": len(checks),
                "visible": _share(sum(c.visible for c in checks), len(checks)),
                "recoverable": _share(sum(c.recoverable for c in checks), len(checks)),
                "by_search": _share(sum(c.by_search for c in checks), len(checks)),
                "by_read": _share(sum(c.by_read for c in checks), len(checks)),
            }
            actions = [c.action_visible for c in checks if c.action_visible is not None]
            if actions:
                cell["with_action"] = _share(sum(actions), len(actions))
            if type_ in ONE_OFF:
                later = [c for c in every if c.age > 0]
                cell["next_compaction"] = {
                    "checks": len(later),
                    "visible": _share(sum(c.visible for c in later), len(later)),
                    "recoverable": _share(sum(c.recoverable for c in later), len(later)),
                }
            row[kind] = cell
        probes[type_] = row
    tokens: dict[str, dict[str, Any]] = {}
    for kind in ("all", *kinds):
        rs = [r for r in results if kind in ("all", r.kind)]
        history = sum(r.history_tokens for r in rs)
        final = sum(r.final_render_tokens for r in rs)
        summaries = [t for r in rs for t in r.summary_tokens]
        tokens[kind] = {
            "sessions": len(rs),
            "turns": sum(r.turns for r in rs),
            "blocks": sum(r.blocks for r in rs),
            "compactions": sum(r.compactions for r in rs),
            "min_compactions": min((r.compactions for r in rs), default=0),
            "history_tokens": history,
            "final_render_tokens": final,
            "reduction": 1 - final / history if history else None,
            "min_reduction": min(
                (1 - r.final_render_tokens / r.history_tokens for r in rs if r.history_tokens), default=None
            ),
            "summary_tokens_mean": sum(summaries) / len(summaries) if summaries else None,
            "summary_tokens_max": max(summaries, default=0),
            "renders_over_max_tokens": sum(r.renders_over_max for r in rs),
        }
    failures = goal_failures(probes, tokens, summary_max_tokens=summary_max_tokens)
    return {
        "settings": {"max_tokens": max_tokens, "summary_max_tokens": summary_max_tokens},
        "goals": {
            "visible": GOALS,
            "recoverable": 1.0,
            "reduction": REDUCTION_GOAL,
            "artifact_with_action": ACTION_GOAL,
        },
        "probes": probes,
        "tokens": tokens,
        "failures": failures,
        "seconds": round(sum(r.seconds for r in results), 1),
    }


def goal_failures(
    probes: dict[str, dict[str, dict[str, Any]]],
    tokens: dict[str, dict[str, Any]],
    *,
    summary_max_tokens: int,
) -> list[str]:
    """The goals a run missed, as sentences (empty when every goal is met)."""
    out: list[str] = []
    for type_, goal in GOALS.items():
        cell = probes[type_]["all"]
        if cell["checks"] and cell["visible"] < goal:
            out.append(f"{type_}: {cell['visible']:.1%} visible, goal {goal:.0%}")
        if cell["checks"] and cell["recoverable"] < 1.0:
            out.append(f"{type_}: {cell['recoverable']:.1%} recoverable, goal 100%")
    actions = probes["artifact"]["all"].get("with_action")
    if actions is not None and actions < ACTION_GOAL:
        out.append(f"artifact with its last action: {actions:.1%}, goal {ACTION_GOAL:.0%}")
    total = tokens["all"]
    if total["reduction"] is not None and total["reduction"] < REDUCTION_GOAL:
        out.append(f"token reduction {total['reduction']:.1%}, goal {REDUCTION_GOAL:.0%}")
    if total["summary_tokens_max"] > summary_max_tokens:
        out.append(
            f"a summary of {total['summary_tokens_max']} tokens, over summary_max_tokens {summary_max_tokens}"
        )
    if total["renders_over_max_tokens"]:
        out.append(f"{total['renders_over_max_tokens']} render(s) over max_tokens")
    return out


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.1f}"


def table(report: dict[str, Any]) -> list[str]:
    """The report as markdown tables: visible / recoverable % per probe type and kind, then tokens."""
    kinds = [k for k in report["tokens"] if k != "all"]
    columns = ["all", *kinds]
    lines = [
        "visible % / recoverable % (checks) per probe type and kind",
        "",
        "| probe | goal | " + " | ".join(columns) + " |",
        "|---|---|" + "---|" * len(columns),
    ]
    for type_, row in report["probes"].items():
        cells = [
            f"{_pct(row[c]['visible'])} / {_pct(row[c]['recoverable'])} ({row[c]['checks']})" for c in columns
        ]
        lines.append(f"| {type_} | {GOALS[type_] * 100:.0f} | " + " | ".join(cells) + " |")
        if any("with_action" in row[c] for c in columns):
            actions = [_pct(row[c].get("with_action")) for c in columns]
            lines.append("| … with its last action on the same line | - | " + " | ".join(actions) + " |")
        if type_ in ONE_OFF:
            later = [row[c]["next_compaction"] for c in columns]
            cells = [f"{_pct(x['visible'])} / {_pct(x['recoverable'])} ({x['checks']})" for x in later]
            lines.append("| … still after the next compaction | - | " + " | ".join(cells) + " |")
    settings = report["settings"]
    lines += [
        "",
        f"tokens (max_tokens {settings['max_tokens']:,}, summary_max_tokens {settings['summary_max_tokens']})",
        "",
        "| | " + " | ".join(columns) + " |",
        "|---|" + "---|" * len(columns),
    ]
    rows: list[tuple[str, str]] = [
        ("sessions", "sessions"),
        ("turns", "turns"),
        ("compactions", "compactions"),
        ("fewest compactions in a session", "min_compactions"),
        ("history tokens (every block written)", "history_tokens"),
        ("final render tokens", "final_render_tokens"),
        ("reduction %", "reduction"),
        ("lowest reduction in a session %", "min_reduction"),
        ("summary tokens, mean", "summary_tokens_mean"),
        ("summary tokens, max", "summary_tokens_max"),
        ("renders over max_tokens", "renders_over_max_tokens"),
    ]
    for label, key in rows:
        values = []
        for c in columns:
            value = report["tokens"][c][key]
            if key in ("reduction", "min_reduction"):
                values.append(_pct(value))
            elif isinstance(value, float):
                values.append(f"{value:,.0f}")
            else:
                values.append(f"{value:,}")
        lines.append(f"| {label} | " + " | ".join(values) + " |")
    return lines


def side_by_side(reports: dict[str, dict[str, Any]]) -> list[str]:
    """The phrasing sets' "all" columns next to each other: a rule tuned to one set shows up as a
    gap in the other."""
    names = list(reports)
    lines = [
        "visible % / recoverable % (checks) per probe type and phrasing set",
        "",
        "| probe | goal | " + " | ".join(names) + " |",
        "|---|---|" + "---|" * len(names),
    ]

    def cell(x: dict[str, Any]) -> str:
        return f"{_pct(x['visible'])} / {_pct(x['recoverable'])} ({x['checks']})"

    for type_ in PROBE_TYPES:
        rows = [reports[n]["probes"][type_]["all"] for n in names]
        lines.append(f"| {type_} | {GOALS[type_] * 100:.0f} | " + " | ".join(cell(x) for x in rows) + " |")
        if type_ == "artifact":
            actions = [_pct(x.get("with_action")) for x in rows]
            lines.append(
                f"| … with its last action on the same line | {ACTION_GOAL * 100:.0f} | "
                + " | ".join(actions)
                + " |"
            )
        if type_ in ONE_OFF:
            later = [cell(x["next_compaction"]) for x in rows]
            lines.append("| … still after the next compaction | - | " + " | ".join(later) + " |")
    totals = [reports[n]["tokens"]["all"] for n in names]
    lines.append(
        f"| token reduction % | {REDUCTION_GOAL * 100:.0f} | "
        + " | ".join(_pct(t["reduction"]) for t in totals)
        + " |"
    )
    lines.append(
        "| summary tokens, max | - | " + " | ".join(f"{t['summary_tokens_max']:,}" for t in totals) + " |"
    )
    lines.append(
        "| renders over max_tokens | 0 | "
        + " | ".join(f"{t['renders_over_max_tokens']:,}" for t in totals)
        + " |"
    )
    lines.append(
        "| sessions, compactions | - | "
        + " | ".join(f"{t['sessions']}, {t['compactions']:,}" for t in totals)
        + " |"
    )
    return lines
