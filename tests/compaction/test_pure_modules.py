"""The compaction core is pure: importing it loads neither Django nor the Anthropic SDK."""

from __future__ import annotations

import subprocess
import sys

PURE = [
    "compaction.cutpoint",
    "compaction.planner",
    "compaction.digest",
    "compaction.summarizers",
    "compaction.summary_sections",
]


def test_pure_modules_import_no_django_and_no_anthropic() -> None:
    code = (
        "import sys\n"
        + "".join(f"import {m}\n" for m in PURE)
        + "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('django', 'anthropic', 'httpx', 'httpx2'))\n"
        + "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
