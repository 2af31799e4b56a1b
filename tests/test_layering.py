"""The pure core imports no Django and no anthropic (DESIGN §2)."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PURE = [
    *sorted((ROOT / "timeline_app" / "rendering").glob("*.py")),
    *[
        ROOT / "compaction" / f"{name}.py"
        for name in (
            "cutpoint",
            "planner",
            "digest",
            "summarizers",
            "summary_sections",
            "tokens",
            "strategies",
        )
        if (ROOT / "compaction" / f"{name}.py").exists()
    ],
]
FORBIDDEN = (
    "django",
    "anthropic",
    "rest_framework",
    "celery",
    "timeline_app.models",
    "timeline_app.services",
)


def imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_pure_core_imports_no_django_and_no_anthropic():
    assert len(PURE) >= 8
    offenders = {
        str(path.relative_to(ROOT)): sorted(m for m in imported_modules(path) if m.startswith(FORBIDDEN))
        for path in PURE
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_only_the_anthropic_summarizer_imports_anthropic():
    importers = [
        str(path.relative_to(ROOT))
        for path in ROOT.glob("[ct]*/**/*.py")
        if "tests" not in path.parts and any(m.split(".")[0] == "anthropic" for m in imported_modules(path))
    ]
    assert importers in ([], ["compaction/anthropic_summarizer.py"])
