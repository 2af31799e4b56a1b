"""``bench load``: simulated agents against a running stack (``make serve``), over HTTP.

K agents (default 16) run concurrently, each growing its own conversation: a step appends (a new
turn every few steps, otherwise a tool round: call + result) and then renders, as an agent does
before every model call. Meanwhile the stack's beat and worker compact in the background. Printed:
p50/p95/p99 of append and render, requests/s, errors, the share of renders that compacted inline
(their response carries ``compaction``: the agent waited for a summary) and the database bytes per
stored block.

The key is made in the database this command is configured with (``DATABASE_URL``): run it with the
server's environment. Only loopback targets are accepted; every loop is bounded by a step count and
by ``max_seconds``. The scratch tenant and its conversations are deleted at the end.
"""

from __future__ import annotations

import asyncio
import ipaddress
import secrets
import socket
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx

from timeline_app.models import Tenant
from timeline_app.services.api_keys import api_key_create
from timeline_bench.storage import our_tables, relation_bytes

TOOL_ROUNDS_PER_TURN = 4


class NotLoopback(ValueError):
    pass


def require_loopback(url: str) -> str:
    """``url`` without a trailing slash, if every address its host resolves to is loopback."""
    parts = urlsplit(url)
    if parts.scheme not in {"http", "https"} or not parts.hostname:
        raise NotLoopback(f"{url!r} is not an http(s) URL")
    try:
        infos = socket.getaddrinfo(parts.hostname, parts.port or 80, proto=socket.IPPROTO_TCP)
    except socket.gaierror as exc:
        raise NotLoopback(f"{parts.hostname!r} does not resolve: {exc}") from None
    addresses = {str(info[4][0]) for info in infos}
    outside = sorted(a for a in addresses if not ipaddress.ip_address(a.split("%")[0]).is_loopback)
    if outside:
        raise NotLoopback(
            f"bench load only targets loopback addresses; {parts.hostname} is {', '.join(outside)}"
        )
    return url.rstrip("/")


@dataclass
class LoadConfig:
    url: str
    agents: int = 16
    blocks: int = 300  # per agent; the full run is 2,000
    max_seconds: float = 300.0
    max_tokens: int = 20_000
    result_chars: int = 600


@dataclass
class Stats:
    append: list[float] = field(default_factory=list)
    render: list[float] = field(default_factory=list)
    blocks: int = 0
    inline_compactions: int = 0
    errors: int = 0
    error_samples: list[str] = field(default_factory=list)

    def error(self, what: str) -> None:
        self.errors += 1
        if len(self.error_samples) < 5:
            self.error_samples.append(what[:300])


async def _call(client: httpx.AsyncClient, stats: Stats, kind: str, path: str, body: dict[str, Any]) -> Any:
    started = time.perf_counter()
    try:
        response = await client.post(path, json=body)
    except httpx.HTTPError as exc:
        stats.error(f"{kind} {path}: {type(exc).__name__}: {exc}")
        return None
    elapsed = time.perf_counter() - started
    if response.status_code >= 400:
        stats.error(f"{kind} {path}: {response.status_code} {response.text}")
        return None
    (stats.append if kind == "append" else stats.render).append(elapsed)
    return response.json()


async def _agent(
    number: int, client: httpx.AsyncClient, config: LoadConfig, stats: Stats, deadline: float
) -> None:
    conv = f"load-{secrets.token_hex(4)}-{number}"
    created = await client.post(
        "/api/v1/conversations/", json={"id": conv, "settings": {"max_tokens": config.max_tokens}}
    )
    if created.status_code != 201:
        stats.error(f"create {conv}: {created.status_code} {created.text}")
        return
    base = f"/api/v1/conversations/{conv}"
    written, step, turn_id = 0, 0, ""
    max_steps = config.blocks  # every step writes at least one block
    while written < config.blocks and step < max_steps and time.monotonic() < deadline:
        if step % (TOOL_ROUNDS_PER_TURN + 1) == 0:
            turn_id = f"turn_{step}"
            body: dict[str, Any] = {"turn_id": turn_id, "prompt": f"Agent {number}, request {step}: go on."}
            result = await _call(client, stats, "append", f"{base}/turns/", body)
        else:
            call_id = f"tc_{step}"
            meta = {"tool_call_id": call_id, "tool_id": "web_tools.web_search"}
            blocks = [
                {"type": "react.tool.call", "author": "react", "turn_id": turn_id, "mime": "application/json",
                 "text": f'{{"q": "step {step}"}}', "meta": meta, "id": f"{call_id}.call"},
                {"type": "react.tool.result", "author": "tool", "turn_id": turn_id, "mime": "text/plain",
                 "text": f"result {step} " + "lorem ipsum " * (config.result_chars // 12), "meta": meta,
                 "id": f"{call_id}.result"},
            ]  # fmt: skip
            result = await _call(client, stats, "append", f"{base}/blocks/", {"blocks": blocks})
        step += 1
        if result is None:
            continue
        written += len(result["blocks"])
        stats.blocks += len(result["blocks"])
        rendered = await _call(client, stats, "render", f"{base}/render/", {"system_tokens": 500})
        if rendered is not None and rendered.get("compaction") is not None:
            stats.inline_compactions += 1


async def drive(config: LoadConfig, key: str) -> tuple[Stats, float]:
    stats = Stats()
    limits = httpx.Limits(max_connections=config.agents, max_keepalive_connections=config.agents)
    async with httpx.AsyncClient(
        base_url=config.url, headers={"Authorization": f"Bearer {key}"}, timeout=120, limits=limits
    ) as client:
        probe = await client.get("/api/v1/conversations/?limit=1")
        if probe.status_code == 401:
            raise RuntimeError(
                "the server does not know the bench's key: run bench load with the server's DATABASE_URL"
            )
        started = time.monotonic()
        deadline = started + config.max_seconds
        await asyncio.gather(*(_agent(i, client, config, stats, deadline) for i in range(config.agents)))
        return stats, time.monotonic() - started


def _percentiles(samples: list[float]) -> str:
    if len(samples) < 2:
        return "n/a"
    cuts = statistics.quantiles(samples, n=100, method="inclusive")
    return f"p50 {cuts[49] * 1000:7.1f} ms  p95 {cuts[94] * 1000:7.1f} ms  p99 {cuts[98] * 1000:7.1f} ms"


def run(write: Callable[[str], None], *, config: LoadConfig) -> None:
    config.url = require_loopback(config.url)
    health = httpx.get(f"{config.url}/healthz", timeout=10).json()
    tenant_name = f"bench-load-{secrets.token_hex(4)}"
    _, key = api_key_create(tenant_name=tenant_name, name="bench load")
    before = relation_bytes(our_tables())
    try:
        stats, wall = asyncio.run(drive(config, key))
        grown = relation_bytes(our_tables()) - before
    finally:
        Tenant.objects.filter(name=tenant_name).delete()
    requests = len(stats.append) + len(stats.render) + stats.errors
    renders = len(stats.render)
    write(
        f"load: {config.agents} agents x up to {config.blocks} blocks against {config.url} "
        f"(broker: {health.get('checks', {}).get('broker', '?')}), {wall:.1f} s"
    )
    write(f"  append  {len(stats.append):6d} calls  {_percentiles(stats.append)}")
    write(f"  render  {renders:6d} calls  {_percentiles(stats.render)}")
    write(f"  requests/s {requests / wall:8.1f}   blocks stored {stats.blocks}   errors {stats.errors}")
    for sample in stats.error_samples:
        write(f"    error: {sample}")
    share = stats.inline_compactions / renders if renders else 0.0
    write(f"  renders that waited for a summary (compacted inline): {stats.inline_compactions} ({share:.1%})")
    if stats.blocks:
        write(f"  database bytes per block: {grown / stats.blocks:,.0f} (growth of the timeline tables)")
