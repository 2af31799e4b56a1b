"""The docs hold together: the README opens with the two set-up commands and stays short, every
relative link resolves and every link to a heading names one, the code the docs show is taken from
the example files under docs/examples/, and every example file is run by a test. They stay true:
no reference page counts the tests, the module tables name every module, and every DESIGN citation
in the code names a section of docs/design.md."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "docs" / "examples"
README = ROOT / "README.md"
REFERENCE = [README, ROOT / "clients" / "python" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# Dated measurement reports (docs/reports/): what was measured on a date, quoted by a reference page.
REPORTS = sorted((ROOT / "docs" / "reports").glob("*.md"))
PAGES = [*REFERENCE, *REPORTS]
# The pages whose Python blocks are excerpts of an example file (the other pages' blocks sketch
# an API or a setting and are not meant to run on their own).
EXCERPTING = [README, ROOT / "clients" / "python" / "README.md", ROOT / "docs" / "client.md"]


def fenced(text: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", text, flags=re.S | re.M)


def test_the_readme_opens_with_the_two_set_up_commands_and_stays_short():
    text = README.read_text(encoding="utf-8")
    first = re.search(r"^```\w*\n(.*?)^```", text, flags=re.S | re.M)
    assert first is not None
    commands = [line.split("#", 1)[0].strip() for line in first.group(1).splitlines()]
    assert commands == ["make run", "make test"]
    assert len(text.splitlines()) <= 200
    assert text.index("docs/concepts.md") < min(
        text.index(f"docs/{page.name}") for page in (ROOT / "docs").glob("*.md") if page.name != "concepts.md"
    ), "concepts.md is the first page the README links"


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path):
    text = page.read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)\s]+)\)", text)
    broken = [
        target
        for target in targets
        if not re.match(r"[a-z]+:", target)
        and not target.startswith("#")
        and not (page.parent / target.split("#", 1)[0]).exists()
    ]
    assert broken == []


def heading_anchor(heading: str) -> str:
    """GitHub's anchor for a Markdown heading: lower case, punctuation dropped, spaces as dashes."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_link_to_a_heading_names_one(page: Path):
    targets = re.findall(r"\]\(([^)\s:]*\.md)?#([^)\s]+)\)", page.read_text(encoding="utf-8"))
    broken = []
    for path, anchor in targets:
        target = page.parent / path if path else page
        text = re.sub(r"^```.*?^```", "", target.read_text(encoding="utf-8"), flags=re.S | re.M)
        if anchor not in {heading_anchor(h) for h in re.findall(r"^#+ (.*)$", text, flags=re.M)}:
            broken.append(f"{path}#{anchor}")
    assert broken == []


@pytest.mark.parametrize("page", EXCERPTING, ids=lambda page: str(page.relative_to(ROOT)))
def test_the_python_the_docs_show_is_taken_from_an_example_file(page: Path):
    examples = [path.read_text(encoding="utf-8") for path in EXAMPLES.glob("*.py")]
    blocks = fenced(page.read_text(encoding="utf-8"), "python")
    assert blocks
    for block in blocks:
        assert any(block in example for example in examples), block


def test_the_typescript_the_docs_show_is_taken_from_an_example_file():
    examples = [
        path.read_text(encoding="utf-8") for path in [*EXAMPLES.glob("*.mts"), *EXAMPLES.glob("*.mjs")]
    ]
    blocks = fenced((ROOT / "docs" / "client.md").read_text(encoding="utf-8"), "ts")
    assert blocks
    for block in blocks:
        assert any(block in example for example in examples), block


def test_the_mcp_configuration_shown_is_the_example_file():
    (shown,) = fenced((ROOT / "docs" / "integrations.md").read_text(encoding="utf-8"), "json")
    assert json.loads(shown) == json.loads((EXAMPLES / "mcp_config.json").read_text(encoding="utf-8"))


def test_every_example_file_is_run_by_a_test():
    tests = "\n".join(
        path.read_text(encoding="utf-8")
        for path in (ROOT / "tests").rglob("test_*.py")
        if path.name != "test_docs.py"
    )
    tests += (ROOT / "tests" / "integrations" / "conftest.py").read_text(encoding="utf-8")
    unused = [path.name for path in EXAMPLES.iterdir() if f'"{path.name}"' not in tests]
    assert unused == []


def test_the_readme_names_every_package_make_test_installs_with_apt():
    """``scripts/test.sh`` apt-installs what it is missing; a newcomer reads which in the README
    (issue 30, defect 9: Chromium and its driver were not mentioned)."""
    script = (ROOT / "scripts" / "test.sh").read_text(encoding="utf-8")
    packages = re.findall(r"need\+=\(([\w-]+)\)", script)
    named = {
        "postgresql": "PostgreSQL",
        "redis-server": "Redis",
        "chromium": "Chromium",
        "chromium-driver": "chromedriver",
    }
    assert sorted(packages) == sorted(named)
    text = README.read_text(encoding="utf-8")
    setup = text[: text.index("## What it is")]
    assert "apt-get" in setup
    assert [package for package, name in named.items() if name not in setup] == []


# "2,760 tests", "about 550\n  tests", "374 passed", "298 pass": a count of the suite goes stale with
# the next test written. Figures that are not test counts ("0 errors", "10 examples") do not match;
# dated reports (docs/reports/) may record what a run counted.
TEST_COUNT = re.compile(r"\b\d[\d,]*\s+(?:tests?|passed|pass|failed)\b")


@pytest.mark.parametrize("page", REFERENCE, ids=lambda page: str(page.relative_to(ROOT)))
def test_no_reference_page_counts_the_tests(page: Path):
    assert TEST_COUNT.findall(page.read_text(encoding="utf-8")) == []


def package_members(package: Path) -> set[str]:
    """A package's modules and subpackages, as the docs name them: `name` or `name/`."""
    modules = {path.stem for path in package.glob("*.py") if path.name != "__init__.py"}
    packages = {f"{path.parent.name}/" for path in package.glob("*/__init__.py")}
    return modules | packages


def table_row(page: str, first_cell: str) -> str:
    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    (row,) = [line for line in text.splitlines() if line.startswith(f"| {first_cell} ")]
    return row


@pytest.mark.parametrize(
    "package",
    [
        "timeline_app/services",
        "timeline_app/selectors",
        "timeline_app/rendering",
        "timeline_app/domain",
        "compaction",
    ],
)
def test_the_architecture_page_names_every_module_of_a_package(package: str):
    """docs/architecture.md's row for the package names each of its modules (`blocks`) and
    subpackages (`native/`): a module added or moved without the map following fails here."""
    row = table_row("architecture.md", f"`{package}/`")
    named = set(re.findall(r"`([\w/]+)`", row))
    assert sorted(package_members(ROOT / package) - named) == []


def test_the_admin_page_names_every_admin_module():
    text = (ROOT / "docs" / "admin.md").read_text(encoding="utf-8")
    code = text[text.index("## Code") :]
    named = set(re.findall(r"`timeline_app/admin/([\w/]+)\.py`", code))
    assert sorted(package_members(ROOT / "timeline_app" / "admin") - named) == []


def test_every_design_citation_in_the_code_names_a_section_of_the_design_page():
    """Comments cite docs/design.md as ``DESIGN §N`` or ``DESIGN "Heading"`` (the design used
    to live outside the repository, and 25 citations pointed nowhere)."""
    headings = re.findall(r"^#+ (.*)$", (ROOT / "docs" / "design.md").read_text(encoding="utf-8"), flags=re.M)
    numbers = {heading.split(".", 1)[0] for heading in headings if heading[0].isdigit()}
    sources = [
        path
        for folder in (
            "timeline_app",
            "timeline_bench",
            "compaction",
            "config",
            "tests",
            "clients/python",
            "docs",
        )
        for path in (ROOT / folder).rglob("*")
        if path.suffix in {".py", ".md", ".html", ".ts"}
        and "reports" not in path.parts
        and path.name != "test_docs.py"
    ]
    unknown = []
    for path in sources:
        text = path.read_text(encoding="utf-8")
        unknown += [f"{path.name}: §{n}" for n in re.findall(r"DESIGN §(\d+)", text) if n not in numbers]
        unknown += [f"{path.name}: {t}" for t in re.findall(r'DESIGN "([^"]+)"', text) if t not in headings]
    assert unknown == []
