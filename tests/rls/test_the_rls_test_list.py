"""``scripts/rls_tests.txt`` (``make test-rls``, the second pass of ``make test``) names every test
file that plants another tenant's data behind the API, the MCP tools or the admin: a new one joins
the stripped-filter re-run or this test says which."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Another tenant planted: a second API key or tenant, or the two-tenant fixture.
PLANTS_ANOTHER_TENANT = re.compile(
    r"\boutsider\b|\btwo_tenants\b|make_caller\(\"globex\"\)|api_key_create\(tenant_name=|Tenant\.objects\.create"
)
# Files that plant a second tenant but do not test isolation (or cannot run in-process).
NOT_ISOLATION_TESTS = {
    "tests/api/contexts/test_branch_is_atomic.py",  # one tenant; the atomicity of a branch
    "tests/admin/test_broken_settings_policy.py",  # one tenant
    "tests/admin/test_conversation_charts.py",  # one tenant's charts
    "tests/admin/test_compact_queues.py",  # a mutating action (operators), one conversation
    "tests/admin/test_conversation_list.py",  # list columns; the limited-staff lists are covered
    "tests/admin/test_cost_panel.py",  # figures; the limited-staff cost and CSV are covered
    "tests/admin/test_usage_csv_range_boundary.py",  # the range's boundary; the limited-staff CSV is covered
    "tests/admin/test_open_by_public_id.py",  # lookups by id; covered by the limited-staff pages
    "tests/admin/test_tenant_isolation_pages.py",  # staff on no list: scope = all by design
    "tests/admin/test_hostile_urls.py",  # one tenant; hostile parameters on every admin URL (no 500)
}


def listed() -> list[str]:
    lines = (ROOT / "scripts" / "rls_tests.txt").read_text().splitlines()
    return [line for line in lines if line and not line.startswith("#")]


def test_every_listed_path_exists():
    assert [path for path in listed() if not (ROOT / path).exists()] == []


def test_every_in_process_test_planting_another_tenant_is_listed():
    names = listed()
    covered = [n for n in names if n.endswith(".py")]
    folders = [n.rstrip("/") + "/" for n in names if not n.endswith(".py")]
    missing = []
    for folder in ("api", "admin", "client", "integrations"):
        for path in sorted((ROOT / "tests" / folder).rglob("test_*.py")):
            relative = str(path.relative_to(ROOT))
            text = path.read_text()
            if "pytest.mark.e2e" in text or not PLANTS_ANOTHER_TENANT.search(text):
                continue  # another process (the stripping cannot reach it), or one tenant only
            if relative in covered or relative in NOT_ISOLATION_TESTS or relative.startswith(tuple(folders)):
                continue
            missing.append(relative)
    assert missing == []
