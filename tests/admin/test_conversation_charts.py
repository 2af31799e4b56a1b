"""The conversation page's charts (tokens per turn, reused vs new prefix per render) and the
render history table, with query counts that do not grow with the timeline."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils.html import escape

from tests.admin import urls
from tests.admin.builders import compacted_conversation, contribute_turns, rendered_history
from timeline_app import selectors
from timeline_app.admin import charts, presenters
from timeline_app.domain import blocks as b
from timeline_app.models import Block, RenderRecord, Tenant, Timeline
from timeline_app.services.contexts import context_clear, context_create
from timeline_app.services.conversations import conversation_create

START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


@pytest.fixture
def tenant(db) -> Tenant:
    return Tenant.objects.create(name="acme")


@pytest.fixture
def history(tenant):
    conversation, timeline = compacted_conversation(tenant, turns=8)
    conversation.settings = {**conversation.settings, "ttl_keep_recent_turns": 1}
    conversation.save()
    statuses = rendered_history(timeline, start=START)
    return conversation, timeline, statuses


def _turn_groups(html: str) -> int:
    return html.count('<g class="tl-turn-bar">')


@pytest.mark.django_db
def test_turn_chart_has_one_bar_group_per_turn_and_marks_the_compaction(support, history):
    conversation, timeline, _ = history
    response = support.get(urls.conversation(conversation.pk))
    assert response.status_code == 200
    html = response.content.decode()
    turns = Block.objects.filter(timeline=timeline).values("turn_id").distinct().count()
    assert _turn_groups(html) == turns == 9
    assert html.count('<g class="tl-compaction-marker">') == 1
    # Compacted turns draw the compacted colour, the hidden tool result the hidden one.
    assert 'class="tl-bar-compacted"' in html
    assert 'class="tl-bar-hidden"' in html
    assert 'class="tl-bar-visible"' in html
    assert "turn_t001: 0 visible" in html


@pytest.mark.django_db
def test_turn_chart_numbers_add_up_to_the_blocks(support, history):
    conversation, timeline, _ = history
    html = support.get(urls.conversation(conversation.pk)).content.decode()
    titles = re.findall(
        r"<title>(turn_t\d+): (\d+) visible, (\d+) hidden, (\d+) compacted tokens</title>", html
    )
    assert len(titles) == 9
    total = sum(int(v) + int(h) + int(c) for _, v, h, c in titles)
    assert total == sum(Block.objects.filter(timeline=timeline).values_list("tokens", flat=True))
    # The first half was compacted: nothing of turn 1 is visible any more.
    first = dict((t, (int(v), int(h), int(c))) for t, v, h, c in titles)["turn_t001"]
    assert first[0] == first[1] == 0 and first[2] > 0


@pytest.mark.django_db
def test_render_chart_and_history_table(support, history):
    conversation, timeline, statuses = history
    assert statuses[0] == "armed" and statuses[-1] == "pruned"
    html = support.get(urls.conversation(conversation.pk)).content.decode()
    records = list(RenderRecord.objects.filter(timeline=timeline).order_by("-id"))
    assert len(records) == 3
    assert html.count('<g class="tl-render-bar">') == 3
    assert html.count('class="tl-render-row"') == 3
    for record in records:
        assert record.rendered_at.strftime("%Y-%m-%d %H:%M:%S UTC") in html
        new = record.prefix_tokens - record.reused_prefix_tokens
        assert f"{record.reused_prefix_tokens} reused, {new} new prefix tokens" in html
    assert records[-1].reason == "first_render"
    assert "ttl_expired" in html
    # Pruning in words, not the status code.
    assert "cache expired: old bulky blocks are pruned" in html
    # The first changed path links to the block list searched by that path.
    changed = next(r for r in records if r.first_changed_path)
    link = re.search(r'<a href="([^"]+)" class="tl-changed-path">', html)
    assert link is not None
    assert f"timeline__id__exact={timeline.pk}" in link.group(1)
    assert escape(changed.first_changed_path) in html
    listing = support.get(link.group(1).replace("&amp;", "&"))
    assert listing.status_code == 200
    assert changed.first_changed_path in {blk.path for blk in listing.context["cl"].result_list}


@pytest.mark.django_db
def test_no_render_yet_says_so(support, tenant):
    conversation = conversation_create(tenant=tenant, public_id="fresh", settings={})
    timeline = Timeline.objects.get(conversation=conversation)
    contribute_turns(timeline, turns=2)
    html = support.get(urls.conversation(conversation.pk)).content.decode()
    assert _turn_groups(html) == 2
    assert '<g class="tl-compaction-marker">' not in html
    assert "No render recorded yet" in html


def test_chart_text_is_escaped():
    svg = charts.turn_tokens_svg([charts.TurnBar("<script>x</script>", 1, 0, 0)], markers=[])
    assert "<script>" not in svg and "&lt;script&gt;" in svg
    svg = charts.render_prefix_svg([charts.RenderBar("<b>", "<i>", 1, 2)])
    assert "<b>" not in svg and "<i>" not in svg


def _big(tenant: Tenant, public_id: str, *, turns: int, per_turn: int, renders: int) -> Timeline:
    """A conversation of ``turns × per_turn`` blocks and ``renders`` recorded renders, written in bulk."""
    conversation = conversation_create(tenant=tenant, public_id=public_id, settings={})
    timeline = Timeline.objects.get(conversation=conversation)
    rows = []
    seq = 0
    for turn in range(turns):
        for index in range(per_turn):
            seq += 1
            kind = b.TURN_HEADER if index == 0 else b.ASSISTANT_COMPLETION
            rows.append(
                Block(
                    timeline=timeline,
                    seq=seq,
                    turn_id=f"turn_{turn:05d}",
                    type=kind,
                    path=f"blk:{seq}",
                    text="x",
                    tokens=10,
                    hidden=index == 3,
                )
            )
    Block.objects.bulk_create(rows, batch_size=1000)
    Timeline.objects.filter(pk=timeline.pk).update(next_seq=seq + 1)
    RenderRecord.objects.bulk_create(
        RenderRecord(
            timeline=timeline,
            rendered_at=START + timedelta(minutes=n),
            reason="appended_only",
            reused_prefix_tokens=n,
            prefix_tokens=2 * n,
            first_changed_path=f"blk:{n + 1}",
            pruning_status="fresh",
            settings_key="k",
        )
        for n in range(renders)
    )
    return timeline


@pytest.mark.django_db
def test_conversation_page_queries_do_not_grow_with_the_timeline(support, tenant):
    small = _big(tenant, "small", turns=3, per_turn=5, renders=2)
    big = _big(tenant, "big", turns=500, per_turn=10, renders=300)
    assert Block.objects.filter(timeline=big).count() == 5000
    support.get(urls.conversation(small.conversation_id))  # warm the session and content types
    with CaptureQueriesContext(connection) as few:
        small_page = support.get(urls.conversation(small.conversation_id))
    with CaptureQueriesContext(connection) as many:
        big_page = support.get(urls.conversation(big.conversation_id))
    assert len(many.captured_queries) == len(few.captured_queries)
    html = big_page.content.decode()
    # Bounded: the latest CHART_TURNS turns and HISTORY_RENDERS renders only.
    assert _turn_groups(html) == presenters.CHART_TURNS
    assert "turn_00499" in html and "turn_00299:" not in html
    assert html.count('class="tl-render-row"') == presenters.HISTORY_RENDERS
    assert html.count('<g class="tl-render-bar">') == presenters.HISTORY_RENDERS
    assert _turn_groups(small_page.content.decode()) == 3


@pytest.mark.django_db
def test_a_first_changed_block_without_a_path_links_to_it_by_seq(support, tenant):
    conversation = conversation_create(tenant=tenant, public_id="pathless", settings={})
    timeline = Timeline.objects.get(conversation=conversation)
    contribute_turns(timeline, turns=2)
    header = Block.objects.filter(timeline=timeline, type=b.TURN_HEADER).order_by("-seq").first()
    assert header is not None
    RenderRecord.objects.create(
        timeline=timeline,
        rendered_at=START,
        reason="hidden",
        first_changed_path=header.path or f"{header.type}#{header.seq}",
        pruning_status="fresh",
        settings_key="k",
    )
    html = support.get(urls.conversation(conversation.pk)).content.decode()
    link = re.search(r'<a href="([^"]+)" class="tl-changed-path">', html)
    assert link is not None
    listing = support.get(link.group(1).replace("&amp;", "&"))
    assert [blk.pk for blk in listing.context["cl"].result_list] == [header.pk]


def _plant_renders(timeline: Timeline, *, count: int, day: int) -> list[RenderRecord]:
    """``count`` renders of ``timeline``, newer than any of the history fixture, with numbers
    (``77xx`` reused tokens) no real render of the fixture has."""
    return RenderRecord.objects.bulk_create(
        RenderRecord(
            timeline=timeline,
            rendered_at=START + timedelta(days=day, minutes=n),
            reason="appended_only",
            reused_prefix_tokens=7700 + n,
            prefix_tokens=9900 + n,
            first_changed_path=f"planted:{day}.{n}",
            pruning_status="fresh",
            settings_key="k",
        )
        for n in range(count)
    )


@pytest.mark.django_db
def test_render_table_and_chart_show_only_this_timelines_renders(support, tenant, history):
    conversation, timeline, _ = history
    other = conversation_create(tenant=tenant, public_id="other", settings={})
    other_renders = _plant_renders(Timeline.objects.get(conversation=other), count=5, day=2)
    branch = context_create(conversation=conversation, name="attempt_a")
    branch_renders = _plant_renders(branch, count=2, day=3)
    own = list(RenderRecord.objects.filter(timeline=timeline))
    assert len(own) == 3

    html = support.get(urls.conversation(conversation.pk)).content.decode()
    assert html.count('class="tl-render-row"') == 3
    assert html.count('<g class="tl-render-bar">') == 3
    for record in own:
        assert record.rendered_at.strftime("%Y-%m-%d %H:%M:%S UTC") in html
    for record in [*other_renders, *branch_renders]:
        assert record.rendered_at.strftime("%Y-%m-%d %H:%M:%S UTC") not in html
        assert f"{record.reused_prefix_tokens} reused" not in html
        assert record.first_changed_path not in html

    branch_html = support.get(urls.conversation(conversation.pk, context="attempt_a")).content.decode()
    assert branch_html.count('class="tl-render-row"') == 2
    assert branch_html.count('<g class="tl-render-bar">') == 2
    assert "7700 reused, 2200 new prefix tokens" in branch_html
    other_html = support.get(urls.conversation(other.pk)).content.decode()
    assert other_html.count('class="tl-render-row"') == 5
    assert other_html.count('<g class="tl-render-bar">') == 5
    assert all(r.rendered_at.strftime("%Y-%m-%d %H:%M:%S UTC") not in other_html for r in own)


@pytest.mark.django_db
def test_turn_chart_of_a_cleared_context_shows_the_cleared_turns_out_of_the_window(support, tenant):
    """``DELETE …/messages/`` (``context_clear``) moves a named context's view past its blocks:
    the chart draws them out of the window (the compacted colour), as the facts box counts them."""
    conversation = conversation_create(tenant=tenant, public_id="cleared", settings={})
    branch = context_create(conversation=conversation, name="attempt_a")
    contribute_turns(branch, turns=2, prefix="old")
    context_clear(timeline=branch)
    contribute_turns(branch, turns=1, prefix="new")
    html = support.get(urls.conversation(conversation.pk, context="attempt_a")).content.decode()
    titles = re.findall(
        r"<title>(turn_\w+): (\d+) visible, (\d+) hidden, (\d+) compacted tokens</title>", html
    )
    bars = {turn: (int(v), int(h), int(c)) for turn, v, h, c in titles}
    assert set(bars) == {"turn_old001", "turn_old002", "turn_new001"}
    for turn in ("turn_old001", "turn_old002"):
        visible, hidden, out = bars[turn]
        assert visible == hidden == 0 and out > 0, turn
    visible, hidden, out = bars["turn_new001"]
    assert visible > 0 and out == 0
    # The chart's visible tokens are the window's, as the facts box and the API count them.
    assert visible == selectors.timeline_visible_tokens(timeline=branch)
