"""``bench load --baseline <rev>``: the same load against a baseline revision and the working tree,
both stacks at once on this machine, and the ratio (issue 38).

The baseline is checked out into a temporary git worktree (``git worktree add --detach``); the
working tree runs as it is (uncommitted changes included). Each runs the production layout of
``make serve``: gunicorn (``--web-workers`` × ``--web-threads``, no worker recycling, no access
log), a Celery worker (concurrency 2) and beat, on its own database of the configured PostgreSQL
server (created, migrated by that revision's own code, dropped at the end) and its own Redis
database (broker and cache), connected as the configured role. Both share the virtualenv.

Both loads run at the same time from one event loop, so both stacks see the same machine,
whatever else runs on it: a shared 2-core machine moves absolute figures by 2× from one run to
the next, the ratio far less (docs/scaling.md). Per run and as medians: requests/s, append and
render p50/p99, CPU seconds of the web processes (gunicorn's master and workers, from
``/proc``) per agent step (an append and a render), errors, renders that waited for a summary;
then working tree ÷ baseline.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import httpx
from django.conf import settings
from django.db import connection

from timeline_bench.load import LoadConfig, Stats, drive

TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


@dataclass
class AbConfig:
    baseline: str
    runs: int = 3
    agents: int = 16
    blocks: int = 80  # per agent and run: 40 steps, 640 renders a run at 16 agents
    max_tokens: int = 20_000
    max_seconds: float = 600.0
    web_workers: int = 4
    web_threads: int = 4
    redis_dbs: tuple[int, int] = (14, 15)


@dataclass
class RunFigures:
    requests_per_s: float
    append_p50: float
    append_p99: float
    render_p50: float
    render_p99: float
    web_cpu_per_step: float
    worker_cpu: float
    errors: int
    waited: int
    steps: int
    samples: list[str] = field(default_factory=list)


@dataclass
class Stack:
    label: str
    tree: Path
    database: str
    env: dict[str, str]
    port: int
    logs: Path
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    key: str = ""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _git(*args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(settings.BASE_DIR), *args], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout.strip()


@contextmanager
def baseline_worktree(rev: str, into: Path) -> Iterator[tuple[str, Path]]:
    """``rev`` checked out (detached) into a temporary worktree; removed afterwards."""
    commit = _git("rev-parse", "--verify", f"{rev}^{{commit}}")
    path = into / "baseline"
    _git("worktree", "add", "--detach", str(path), commit)
    try:
        yield commit, path
    finally:
        _git("worktree", "remove", "--force", str(path))


def _with_path(url: str, path: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, parts.fragment))


def _database_url() -> str:
    url = os.environ.get("DATABASE_URL", "")
    if connection.vendor != "postgresql" or not url.startswith(("postgres://", "postgresql://", "pgsql://")):
        raise RuntimeError(
            "bench load --baseline needs DATABASE_URL on PostgreSQL (it creates two databases)"
        )
    return url


def _redis_url() -> str:
    url = str(getattr(settings, "CELERY_BROKER_URL", "") or "")
    if not url.startswith("redis://"):
        raise RuntimeError("bench load --baseline needs CELERY_BROKER_URL on Redis (each stack takes a db)")
    return url


def _stack_env(
    tree: Path, *, database_url: str, redis_url: str, port: int, tmp: Path, config: AbConfig
) -> dict[str, str]:
    env = dict(os.environ)
    python_path = [str(tree)]
    if (tree / "clients" / "python").is_dir():
        python_path.append(str(tree / "clients" / "python"))
    env.update(
        PYTHONPATH=os.pathsep.join(python_path),
        DJANGO_SETTINGS_MODULE="config.settings",
        DATABASE_URL=database_url,
        CELERY_BROKER_URL=redis_url,
        CACHE_URL=redis_url,
        CELERY_TASK_ALWAYS_EAGER="false",
        DEBUG="false",
        ALLOWED_HOSTS="127.0.0.1,localhost",
        GUNICORN_BIND=f"127.0.0.1:{port}",
        GUNICORN_WORKERS=str(config.web_workers),
        GUNICORN_THREADS=str(config.web_threads),
        GUNICORN_MAX_REQUESTS="0",  # no recycling: a recycled worker's CPU time would be lost
        GUNICORN_ACCESS_LOG="",
        GUNICORN_LOG_LEVEL="warning",
        PROMETHEUS_MULTIPROC_DIR=str(tmp / "prometheus"),
        STATIC_ROOT=str(tmp / "static"),
    )
    env.setdefault("SECRET_KEY", secrets.token_urlsafe(32))
    (tmp / "prometheus").mkdir(parents=True, exist_ok=True)
    return env


def _manage(stack: Stack, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=stack.tree,
        env=stack.env,
        capture_output=True,
        text=True,
        check=False,
        timeout=900,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{stack.label}: manage.py {' '.join(args)} failed:\n{done.stderr[-2000:]}")
    return done.stdout


def _start(stack: Stack, name: str, argv: list[str]) -> None:
    log = (stack.logs / f"{name}.log").open("wb")
    stack.processes[name] = subprocess.Popen(
        argv, cwd=stack.tree, env=stack.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )


def stack_start(stack: Stack) -> None:
    _manage(stack, "migrate", "--noinput")
    stack.key = (
        _manage(stack, "create_api_key", "--tenant", "bench-ab", "--name", "bench-ab")
        .strip()
        .splitlines()[-1]
    )
    py = sys.executable
    _start(stack, "web", [py, "-m", "gunicorn", "-c", "config/gunicorn.py", "config.wsgi"])
    _start(
        stack,
        "worker",
        [py, "-m", "celery", "-A", "config", "worker", "--loglevel=WARNING", "--concurrency", "2"],
    )
    _start(
        stack,
        "beat",
        [
            py,
            "-m",
            "celery",
            "-A",
            "config",
            "beat",
            "--loglevel=WARNING",
            "--schedule",
            str(stack.logs / "beat-schedule"),
        ],
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        for name, process in stack.processes.items():
            if process.poll() is not None:
                raise RuntimeError(
                    f"{stack.label}: {name} exited ({process.returncode}); see {stack.logs}/{name}.log"
                )
        try:
            if httpx.get(f"{stack.url}/healthz", timeout=5).status_code < 500:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"{stack.label}: no answer on {stack.url}/healthz after 120 s; see {stack.logs}")


def stack_stop(stack: Stack) -> None:
    for process in stack.processes.values():
        if process.poll() is None:
            with suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
    for process in stack.processes.values():
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)


def _proc_stat(pid: int) -> tuple[int, float] | None:
    """``(ppid, user + system CPU seconds)`` of a live process, from ``/proc``."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = raw[raw.rindex(")") + 2 :].split()
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / TICKS


def process_tree_cpu(root: int) -> float:
    """CPU seconds of ``root`` and every live descendant (gunicorn's master and its workers)."""
    parents: dict[int, int] = {}
    cpu: dict[int, float] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (stat := _proc_stat(int(entry.name))) is not None:
            parents[int(entry.name)], cpu[int(entry.name)] = stat
    tree, frontier = {root}, [root]
    while frontier:
        parent = frontier.pop()
        children = [pid for pid, ppid in parents.items() if ppid == parent and pid not in tree]
        tree.update(children)
        frontier.extend(children)
    return sum(cpu.get(pid, 0.0) for pid in tree)


def _cut(samples: list[float], q: int) -> float:
    if len(samples) < 2:
        return float("nan")
    return statistics.quantiles(samples, n=100, method="inclusive")[q - 1] * 1000


def figures(stats: Stats, wall: float, web_cpu: float, worker_cpu: float) -> RunFigures:
    steps = len(stats.append)
    requests = len(stats.append) + len(stats.render) + stats.errors
    return RunFigures(
        requests_per_s=requests / wall if wall else 0.0,
        append_p50=_cut(stats.append, 50),
        append_p99=_cut(stats.append, 99),
        render_p50=_cut(stats.render, 50),
        render_p99=_cut(stats.render, 99),
        web_cpu_per_step=web_cpu / steps if steps else float("nan"),
        worker_cpu=worker_cpu,
        errors=stats.errors,
        waited=stats.inline_compactions,
        steps=steps,
        samples=list(stats.error_samples),
    )


async def _both(stacks: list[Stack], config: AbConfig) -> list[tuple[Stats, float]]:
    async def one(stack: Stack) -> tuple[Stats, float]:
        load = LoadConfig(
            url=stack.url,
            agents=config.agents,
            blocks=config.blocks,
            max_seconds=config.max_seconds,
            max_tokens=config.max_tokens,
        )
        return await drive(load, stack.key)

    return list(await asyncio.gather(*(one(stack) for stack in stacks)))


def one_run(stacks: list[Stack], config: AbConfig) -> list[RunFigures]:
    web = [process_tree_cpu(s.processes["web"].pid) for s in stacks]
    worker = [process_tree_cpu(s.processes["worker"].pid) for s in stacks]
    results = asyncio.run(_both(stacks, config))
    out = []
    for i, (stack, (stats, wall)) in enumerate(zip(stacks, results, strict=True)):
        web_cpu = process_tree_cpu(stack.processes["web"].pid) - web[i]
        worker_cpu = process_tree_cpu(stack.processes["worker"].pid) - worker[i]
        out.append(figures(stats, wall, web_cpu, worker_cpu))
    return out


def _line(label: str, f: RunFigures) -> str:
    return (
        f"{label:>9} {f.requests_per_s:8.1f} req/s  append p50/p99 {f.append_p50:6.1f}/{f.append_p99:6.1f} ms"
        f"  render p50/p99 {f.render_p50:6.1f}/{f.render_p99:6.1f} ms  web CPU {f.web_cpu_per_step * 1000:6.1f} ms/step"
        f"  worker CPU {f.worker_cpu:5.1f} s  errors {f.errors}  waited {f.waited}/{f.steps}"
    )


METRICS = (
    ("requests/s", "requests_per_s", "higher is better"),
    ("web CPU per step", "web_cpu_per_step", "lower is better"),
    ("append p50", "append_p50", "lower is better"),
    ("render p50", "render_p50", "lower is better"),
    ("append p99", "append_p99", "lower is better"),
    ("render p99", "render_p99", "lower is better"),
)


def median_of(runs: list[RunFigures], attribute: str) -> float:
    return float(statistics.median(float(getattr(run, attribute)) for run in runs))


def report(write: Callable[[str], None], labels: tuple[str, str], runs: list[list[RunFigures]]) -> None:
    base, work = ([run[i] for run in runs] for i in (0, 1))
    write(
        f"medians of {len(runs)} runs (both stacks at once in each run); ratio = {labels[1]} / {labels[0]}:"
    )
    for name, attribute, better in METRICS:
        b, w = median_of(base, attribute), median_of(work, attribute)
        scale = 1000 if attribute == "web_cpu_per_step" else 1
        unit = "" if attribute == "requests_per_s" else " ms"
        paired = [
            getattr(r[1], attribute) / getattr(r[0], attribute) for r in runs if getattr(r[0], attribute)
        ]
        spread = f"  (per run {', '.join(f'{p:.3f}' for p in paired)})" if paired else ""
        write(
            f"  {name:<17} {labels[0]} {b * scale:8.1f}{unit}  {labels[1]} {w * scale:8.1f}{unit}"
            f"  ratio {w / b if b else float('nan'):.3f} ({better}){spread}"
        )
    for label, series in zip(labels, (base, work), strict=True):
        write(
            f"  {label}: errors {sum(r.errors for r in series)}, renders that waited for a summary "
            f"{sum(r.waited for r in series)} of {sum(r.steps for r in series)}"
        )


def run(write: Callable[[str], None], *, config: AbConfig) -> None:
    database_url, redis_url = _database_url(), _redis_url()
    token = secrets.token_hex(3)
    tmp = Path(tempfile.mkdtemp(prefix="bench-ab-"))
    created: list[str] = []
    stacks: list[Stack] = []
    try:
        with baseline_worktree(config.baseline, tmp) as (commit, base_tree):
            for label, tree, db_index in (
                ("baseline", base_tree, config.redis_dbs[0]),
                ("working", Path(settings.BASE_DIR), config.redis_dbs[1]),
            ):
                name = f"bench_ab_{label}_{token}"
                with connection.cursor() as cursor:
                    cursor.execute(f'CREATE DATABASE "{name}"')
                created.append(name)
                port = _free_port()
                logs = tmp / f"logs-{label}"
                logs.mkdir()
                env = _stack_env(
                    tree,
                    database_url=_with_path(database_url, f"/{name}"),
                    redis_url=_with_path(redis_url, f"/{db_index}"),
                    port=port,
                    tmp=logs,
                    config=config,
                )
                stacks.append(Stack(label=label, tree=tree, database=name, env=env, port=port, logs=logs))
            for stack in stacks:
                stack_start(stack)
            head = _git("rev-parse", "--short", "HEAD")
            dirty = (
                " (with uncommitted changes)" if _git("status", "--porcelain", "--untracked-files=no") else ""
            )
            labels = (commit[:7], f"{head}{dirty and '+'}")
            write(
                f"bench load A/B: baseline {commit[:7]} ({config.baseline}) against the working tree at "
                f"{head}{dirty}; {config.agents} agents x {config.blocks} blocks, {config.runs} runs, "
                f"both stacks at once; gunicorn {config.web_workers}x{config.web_threads}, worker and beat each; "
                f"role {connection.settings_dict.get('USER') or '?'} on {connection.settings_dict.get('HOST')}"
            )
            runs: list[list[RunFigures]] = []
            for number in range(1, config.runs + 1):
                load = os.getloadavg()[0]
                figures_pair = one_run(stacks, config)
                runs.append(figures_pair)
                write(f"run {number} (load average {load:.1f} before):")
                for label, f in zip(labels, figures_pair, strict=True):
                    write(_line(label, f))
                    for sample in f.samples:
                        write(f"    error: {sample}")
            report(write, labels, runs)
            for stack in stacks:
                stack_stop(stack)
    finally:
        for stack in stacks:
            stack_stop(stack)
        connection.close()  # no session of ours may hold the databases while they are dropped
        for name in created:
            with connection.cursor() as cursor:
                cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        shutil.rmtree(tmp, ignore_errors=True)
