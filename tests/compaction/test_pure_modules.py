"""The pure core is pure at run time too: importing all of it loads neither Django, nor an HTTP
client, nor the Anthropic SDK (import-linter checks the same statically, tests/test_layering.py)."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import compaction
import timeline_app.rendering

# The adapters allowed to import their SDK (and so httpx).
ADAPTERS = {"compaction.summary.anthropic", "compaction.summary.openai"}


def pure_modules() -> list[str]:
    names = []
    for package in (compaction, timeline_app.rendering):
        for info in pkgutil.walk_packages(package.__path__, prefix=f"{package.__name__}."):
            if info.name not in ADAPTERS:
                names.append(info.name)
    return sorted(names)


def test_the_pure_core_is_found() -> None:
    assert {
        "compaction.cutpoint",
        "compaction.planner",
        "compaction.summary.extractive",
        "timeline_app.rendering.pipeline",
    } <= set(pure_modules())


def test_pure_modules_import_no_django_and_no_anthropic() -> None:
    code = (
        "import sys\n"
        + "".join(f"import {m}\n" for m in pure_modules())
        + "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('django', 'anthropic', 'openai', 'httpx', 'celery'))\n"
        + "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
