"""The cost panel of the conversation page, its forecast-vs-actual chart, and the tenant usage CSV.

The chart is server-rendered SVG like the page's other charts: per reported render (oldest
first), the cache read the forecast promised beside the one the provider billed; an unexplained
miss is drawn in red and links to the block where that render's prefix first changed.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, time
from typing import Any

from django.core.exceptions import BadRequest, PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.utils.dateparse import parse_date
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from timeline_app import roles, selectors
from timeline_app.admin import display
from timeline_app.admin import selectors as admin_selectors
from timeline_app.admin.charts import BOTTOM, HEIGHT, LEFT, RIGHT, TOP, WIDTH, axis, chart_svg, slots
from timeline_app.domain.message_validation import storable_problems
from timeline_app.models import Conversation, RenderUsage, Tenant, Timeline
from timeline_app.services.usage import usage_summary

CHART_RENDERS = 60
FORECAST = "#7f8c8d"
ACTUAL = "#2e8b57"
MISS = "#c0392b"


@dataclass(frozen=True)
class UsageBar:
    label: str
    forecast_read: int
    actual_read: int
    miss: bool
    miss_url: str


def forecast_vs_actual_svg(bars: Sequence[UsageBar]) -> SafeString:
    """Two bars per render: the forecast cache read (grey) and the actual one (green, red for an
    unexplained miss, which links to the first changed block)."""
    peak = max((max(b.forecast_read, b.actual_read) for b in bars), default=0)
    scale = (HEIGHT - TOP - BOTTOM) / peak if peak > 0 else 0.0
    slot, width = slots(len(bars))
    half = width / 2
    base = HEIGHT - BOTTOM
    groups = []
    for i, bar in enumerate(bars):
        x = LEFT + i * slot
        forecast_h, actual_h = bar.forecast_read * scale, bar.actual_read * scale
        marker = (
            format_html(
                '<a href="{}" class="tl-miss-link"><rect class="tl-miss" x="{}" y="{}" width="{}"'
                ' height="4" fill="{}"/></a>',
                bar.miss_url or "#",
                f"{x:.1f}",
                TOP - 5,
                f"{width:.1f}",
                MISS,
            )
            if bar.miss
            else ""
        )
        groups.append(
            format_html(
                '<g class="tl-usage-bar{}"><title>{}: forecast read {}, actual read {}{}</title>'
                '<rect x="{}" y="{}" width="{}" height="{}" fill="{}"/>'
                '<rect x="{}" y="{}" width="{}" height="{}" fill="{}"/>{}</g>',
                " tl-usage-miss" if bar.miss else "",
                bar.label,
                bar.forecast_read,
                bar.actual_read,
                " (unexplained miss)" if bar.miss else "",
                f"{x:.1f}",
                f"{base - forecast_h:.1f}",
                f"{half:.1f}",
                f"{forecast_h:.1f}",
                FORECAST,
                f"{x + half:.1f}",
                f"{base - actual_h:.1f}",
                f"{half:.1f}",
                f"{actual_h:.1f}",
                MISS if bar.miss else ACTUAL,
                marker,
            )
        )
    legend = format_html_join(
        "",
        '<rect x="{}" y="2" width="10" height="10" fill="{}"/><text x="{}" y="11" font-size="11" fill="#333">{}</text>',
        (
            (WIDTH - RIGHT - 150 * (3 - i), color, WIDTH - RIGHT - 150 * (3 - i) + 14, name)
            for i, (name, color) in enumerate(
                (("forecast read", FORECAST), ("actual read", ACTUAL), ("unexplained miss", MISS))
            )
        ),
    )
    return chart_svg(
        "Cache-read tokens per reported render: forecast vs actual",
        format_html(
            "{}{}{}",
            axis(peak, "reported renders, oldest first"),
            format_html_join("", "{}", ((group,) for group in groups)),
            legend,
        ),
    )


def cost_panel(*, conversation: Conversation, timeline: Timeline) -> dict[str, Any]:
    """The panel's context: the conversation's totals (every context) and this context's chart
    (two queries: one aggregate, one bounded list)."""
    rows = selectors.conversation_usages(conversation=conversation)
    totals = usage_summary(selectors.usage_totals(rows))
    recent = list(
        selectors.conversation_usages(conversation=conversation, timeline=timeline).order_by(
            "-rendered_at", "-id"
        )[:CHART_RENDERS]
    )
    bars = [
        UsageBar(
            label=display.utc(row.rendered_at),
            forecast_read=row.forecast_read_tokens,
            actual_read=row.cache_read_tokens,
            miss=row.unexplained_miss,
            miss_url=display.changed_block_url(timeline=timeline, path=row.first_changed_path)
            if row.first_changed_path
            else "",
        )
        for row in reversed(recent)
    ]
    return {
        "usage": totals,
        "usage_share_percent": round(100 * totals["cache_read_share"], 1),
        "usage_accuracy_percent": round(100 * totals["forecast_accuracy"], 1)
        if totals["forecast_accuracy"] is not None
        else None,
        "usage_chart": forecast_vs_actual_svg(bars),
        "usage_chart_count": len(bars),
        "usage_chart_limit": CHART_RENDERS,
        "usage_misses": [bar for bar in bars if bar.miss][-10:],
    }


CSV_COLUMNS = (
    "rendered_at",
    "conversation",
    "context",
    "render_id",
    "provider",
    "model",
    "priced_model",
    "uncached_input_tokens",
    "cache_read_tokens",
    "cache_write_5m_tokens",
    "cache_write_1h_tokens",
    "output_tokens",
    "forecast_read_tokens",
    "cost_usd",
    "cost_without_cache_usd",
    "unexplained_miss",
    "cache_miss_reason",
    "first_changed_path",
)


def _day(request: HttpRequest, name: str) -> datetime | None:
    raw = request.GET.get(name)
    if not raw:
        return None
    try:
        day = parse_date(raw) if len(raw) == 10 else None
    except ValueError:  # well formed but no such day: 2026-13-01, 0000-00-00, 2026-02-30
        day = None
    if day is None:
        raise BadRequest(f"{name} must be a date, YYYY-MM-DD")
    return datetime.combine(day, time.min, tzinfo=UTC)


def _csv_row(row: RenderUsage) -> list[Any]:
    return [
        row.rendered_at.isoformat(),
        row.conversation.public_id,
        row.timeline.name,
        row.render_public_id,
        row.provider,
        row.model,
        row.priced_model,
        row.uncached_input_tokens,
        row.cache_read_tokens,
        row.cache_write_5m_tokens,
        row.cache_write_1h_tokens,
        row.output_tokens,
        row.forecast_read_tokens,
        "" if row.cost_usd is None else format(row.cost_usd.normalize(), "f"),
        "" if row.cost_without_cache_usd is None else format(row.cost_without_cache_usd.normalize(), "f"),
        int(row.unexplained_miss),
        row.cache_miss_reason,
        row.first_changed_path,
    ]


class _Echo:
    def write(self, value: str) -> str:
        return value


def usage_csv_view(request: HttpRequest) -> HttpResponse:
    """``…/conversation/usage.csv?tenant=<name>&since=YYYY-MM-DD&until=YYYY-MM-DD``: every reported
    render of the tenant rendered in ``[since, until)``, oldest first. Operators and superusers."""
    if not roles.can_export(request.user):
        raise PermissionDenied
    # Only a tenant the staff user may see (``Tenant.staff_users``): another one is unknown here.
    tenants = admin_selectors.staff_tenant_ids(user=request.user)
    name = request.GET.get("tenant", "")
    if storable_problems(name):  # a NUL: PostgreSQL refuses it even in a comparison
        raise BadRequest("tenant must name a tenant")
    named = Tenant.objects.filter(name=name)
    tenant = admin_selectors.in_tenants(named, tenants, via="pk").first()
    if tenant is None:
        raise BadRequest("tenant must name a tenant")
    since, until = _day(request, "since"), _day(request, "until")
    rows = selectors.tenant_usage_rows(tenant=tenant, since=since, until=until)
    writer = csv.writer(_Echo())
    lines = [
        writer.writerow(CSV_COLUMNS),
        *(writer.writerow(_csv_row(row)) for row in rows.iterator(chunk_size=500)),
    ]
    response = HttpResponse("".join(lines), content_type="text/csv; charset=utf-8")
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in tenant.name)
    response["Content-Disposition"] = (
        f'attachment; filename="usage-{safe}-{request.GET.get("since") or "start"}-{request.GET.get("until") or "now"}.csv"'
    )
    return response
