"""A seed rule is defined once, in the module named for it (issue 34): a second ``def`` of the same
name anywhere in the application is a copy that will drift."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("timeline_app", "compaction")

HOMES = {
    "is_turn_start": "timeline_app/domain/blocks.py",
    "continued_turn_header": "timeline_app/rendering/continued_header.py",
    "read_digest": "compaction/digest.py",
    "build_summary_block": "compaction/summary/block.py",
}


def definitions(name: str) -> list[str]:
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
                    found.append(path.relative_to(ROOT).as_posix())
    return found


@pytest.mark.parametrize("name", sorted(HOMES))
def test_the_rule_has_one_definition_in_its_home(name: str) -> None:
    assert definitions(name) == [HOMES[name]]
