"""``bench load --baseline``'s measuring parts: the web processes' CPU from /proc, and the ratios."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from timeline_bench.load_ab import RunFigures, process_tree_cpu, report

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads /proc")


def test_the_cpu_of_a_process_tree_counts_its_children():
    """gunicorn's CPU is its master's and its workers': a busy grandchild counts, while alive."""
    from timeline_bench.load_ab import _proc_stat

    busy = "import time\nend = time.process_time() + 1.0\nwhile time.process_time() < end: pass"
    parent = subprocess.Popen(
        [sys.executable, "-c", f"import subprocess, sys; subprocess.run([sys.executable, '-c', {busy!r}])"]
    )
    seen = 0.0
    try:
        deadline = time.monotonic() + 30
        while parent.poll() is None and time.monotonic() < deadline and seen < 0.4:
            own = _proc_stat(parent.pid)
            seen = max(seen, process_tree_cpu(parent.pid) - (own[1] if own else 0.0))
            time.sleep(0.05)
    finally:
        parent.kill()
        parent.wait(timeout=10)
    assert seen >= 0.4  # the grandchild's busy loop, on top of its idle parent


def figures(rps: float, cpu: float) -> RunFigures:
    return RunFigures(
        requests_per_s=rps, append_p50=10, append_p99=20, render_p50=10, render_p99=20,
        web_cpu_per_step=cpu, worker_cpu=0, errors=0, waited=0, steps=40,
    )  # fmt: skip


def test_the_ratio_is_the_working_trees_median_over_the_baselines():
    lines: list[str] = []
    runs = [[figures(10, 0.020), figures(12, 0.018)], [figures(20, 0.030), figures(21, 0.024)],
            [figures(30, 0.040), figures(36, 0.030)]]  # fmt: skip
    report(lines.append, ("base", "work"), runs)
    rps = next(line for line in lines if "requests/s" in line)
    cpu = next(line for line in lines if "web CPU per step" in line)
    assert "ratio 1.050" in rps and "1.200, 1.050, 1.200" in rps  # median 21 / 20; per run
    assert "ratio 0.800" in cpu  # median 24 ms / 30 ms
