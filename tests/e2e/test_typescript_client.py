"""The TypeScript client (clients/typescript) against a live server on the test database:
``npm ci`` (the committed lockfile), ``npm run typecheck`` (tsc strict: the client, its tests and
docs/examples/anthropic_tool_loop.mts, the SDK request types checked at compile time) and
``npm test`` (node --test: every method, retries with a fault-injecting fetch, the error shapes,
two tenants, pagination, the example, the generated schema types against the schema). Then the
quick start as docs/client.md gives it: a new npm project installs the client from its folder and
runs docs/examples/typescript_quickstart.mjs as written."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.processes import ROOT
from timeline_app.services.api_keys import api_key_create

pytestmark = pytest.mark.e2e

PACKAGE = ROOT / "clients" / "typescript"
EXAMPLES = ROOT / "docs" / "examples"
# Compiled and run by the package's own suite (test/example.test.ts).
TOOL_LOOP = EXAMPLES / "anthropic_tool_loop.mts"
QUICKSTART = EXAMPLES / "typescript_quickstart.mjs"


def npm(*args: str, env: dict[str, str], cwd: Path = PACKAGE, timeout: int = 600) -> str:
    run = subprocess.run(
        ["npm", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert run.returncode == 0, f"npm {' '.join(args)} failed:\n{run.stdout[-6000:]}\n{run.stderr[-3000:]}"
    return run.stdout


def test_the_typescript_client_builds_typechecks_and_passes_its_suite_against_the_service(server, tmp_path):
    if shutil.which("npm") is None:
        pytest.fail("npm is missing: the TypeScript client needs Node 20 (scripts/test.sh installs nodejs)")
    version = subprocess.run(["node", "--version"], capture_output=True, text=True, check=True).stdout
    assert int(version.strip().lstrip("v").split(".")[0]) >= 20, (
        f"the TypeScript client needs Node 20, not {version}"
    )
    _, key = api_key_create(tenant_name="ts-client")
    _, other_key = api_key_create(tenant_name="ts-client-other")
    env = {
        **os.environ,
        "TIMELINE_API_URL": server,
        "TIMELINE_API_KEY": key,
        "TIMELINE_API_KEY_OTHER": other_key,
        "TIMELINE_PYTHON": sys.executable,  # the schema drift test runs manage.py spectacular
        "npm_config_update_notifier": "false",
        "npm_config_fund": "false",
        "npm_config_audit": "false",
    }
    npm("ci", env=env)
    npm("run", "typecheck", env=env)
    output = npm("test", env=env)
    # Only the tests of routes this service's schema lacks may skip (test/native-loop.test.ts).
    skipped = re.findall(r"# SKIP (.*)", output)
    assert "# fail 0" in output and all(why.endswith("not in the service's schema") for why in skipped), (
        output[-3000:]
    )
    assert (
        TOOL_LOOP.exists() and "anthropic_tool_loop.mjs" in (PACKAGE / "test" / "example.test.ts").read_text()
    )

    # The quick start: npm install ./clients/typescript in another project, the example as written.
    project = tmp_path / "agent"
    project.mkdir()
    npm("init", "-y", env=env, cwd=project)
    npm("install", str(PACKAGE), env=env, cwd=project)
    shutil.copy(QUICKSTART, project / "quickstart.mjs")
    run = subprocess.run(
        ["node", "quickstart.mjs"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert re.fullmatch(r"\d+ visible tokens in 3 messages\n", run.stdout), (
        run.stdout
    )  # ends with continue_text
