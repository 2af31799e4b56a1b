"""No application function runs over 80 lines (issue 34): a longer one is split where it reads worse
whole. The benchmarks (timeline_bench: scripts), tests and migrations are not application code."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("timeline_app", "compaction", "config", "clients/python/timeline_client")
MAX_LINES = 80


def functions(tree: ast.AST, prefix: str = "") -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    found = []
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found.append((prefix + node.name, node))
            found += functions(node, f"{prefix}{node.name}.")
        elif isinstance(node, ast.ClassDef):
            found += functions(node, f"{prefix}{node.name}.")
        else:
            found += functions(node, prefix)
    return found


def too_long() -> dict[str, str]:
    """``qualified name`` → ``path:line (lines)`` for every function over MAX_LINES lines, its
    ``def`` line to its last (decorators not counted)."""
    offenders = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            for name, node in functions(ast.parse(path.read_text(), str(path))):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_LINES:
                    offenders[name] = f"{path.relative_to(ROOT)}:{node.lineno} ({lines} lines)"
    return offenders


def test_no_application_function_runs_over_80_lines():
    offenders = {name: where for name, where in too_long().items()}

    assert not offenders, "split these functions:\n" + "\n".join(
        f"  {where} {name}" for name, where in sorted(offenders.items(), key=lambda item: item[1])
    )


def test_the_length_counts_a_nested_method_by_its_qualified_name():
    body = "\n".join(f"        x{i} = {i}" for i in range(MAX_LINES))
    tree = ast.parse(f"class A:\n    def long(self):\n{body}\n    def short(self):\n        pass\n")

    lengths = {name: (n.end_lineno or 0) - n.lineno + 1 for name, n in functions(tree)}

    assert lengths == {"A.long": MAX_LINES + 1, "A.short": 2}
