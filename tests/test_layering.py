"""The layering of docs/architecture.md, as declared in pyproject's import-linter contracts."""

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_import_contracts_hold() -> None:
    lint_imports = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run(
        [str(lint_imports), "--no-logo", "--no-cache"], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


# The code whose private names stay private: a ``_name`` is its module's own. A module that
# needs another's helper needs it public (or the two are one concept, and one module).
TREES = {
    "timeline_app": ROOT / "timeline_app",
    "compaction": ROOT / "compaction",
    "config": ROOT / "config",
    "timeline_client": ROOT / "clients" / "python" / "timeline_client",
}


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _modules() -> Iterator[tuple[str, bool, Path]]:
    """(dotted name, is a package ``__init__``, path) of every module in ``TREES``."""
    for top, base in TREES.items():
        for path in sorted(base.rglob("*.py")):
            parts = [top, *path.relative_to(base).with_suffix("").parts]
            is_package = parts[-1] == "__init__"
            yield ".".join(parts[:-1] if is_package else parts), is_package, path


def private_name_uses() -> list[str]:
    """Every ``from x import _y`` and every ``x._y`` read on an imported module of ours, by a
    module other than ``x`` (a private submodule imported from within its own package is fine)."""
    modules = list(_modules())
    known = {name for name, _, _ in modules}
    found = []
    for name, is_package, path in modules:
        package = name if is_package else name.rpartition(".")[0]
        tree = ast.parse(path.read_text(), str(path))
        bound: dict[str, str] = {}  # a local name -> the module of ours it is
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    local = alias.asname or alias.name.split(".")[0]
                    bound[local] = alias.name if alias.asname else local
            elif isinstance(node, ast.ImportFrom):
                source = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    source = ".".join([*anchor, *([source] if source else [])])
                for alias in node.names:
                    target = f"{source}.{alias.name}"
                    if target in known:
                        bound[alias.asname or alias.name] = target
                    if not _is_private(alias.name) or source == name or source.split(".")[0] not in TREES:
                        continue
                    if target in known and (name + ".").startswith(source + "."):
                        continue
                    found.append(f"{name}:{node.lineno} imports {source}.{alias.name}")
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and _is_private(node.attr):
                chain, value = [], node.value
                while isinstance(value, ast.Attribute):
                    chain.append(value.attr)
                    value = value.value
                if isinstance(value, ast.Name) and value.id in bound:
                    owner = ".".join([bound[value.id], *reversed(chain)])
                    if owner in known and owner != name:
                        found.append(f"{name}:{node.lineno} reads {owner}.{node.attr}")
    return found


def test_no_module_uses_another_modules_private_names() -> None:
    # A split whose halves import each other's private names is not a split (docs/architecture.md).
    found = private_name_uses()
    assert not found, "another module's private names used:\n" + "\n".join(found)
