"""The conversation page reads like the timeline: turns in order with their blocks, hidden blocks
marked, the compacted range collapsed under its summary with the digest as tables, named contexts
to switch between, and one page of turns at a time even for 10,000 blocks."""

from __future__ import annotations

import re

import pytest

from tests.admin import urls
from tests.admin.builders import compact, contribute_turns, split_turn_conversation
from timeline_app.admin.pages import BLOCKS_PER_TURN, TURNS_PER_PAGE
from timeline_app.domain import blocks as b
from timeline_app.domain.contributions import NewBlock
from timeline_app.models import Block, Compaction, Timeline
from timeline_app.services.blocks import blocks_append, turn_start
from timeline_app.services.conversations import conversation_create, timeline_get_or_create

# session, user, the support user's tenant scope, conversation, its two permission reads, contexts,
# turn count, turn page, blocks, applied compactions, render history, tokens per turn (the chart),
# compaction count; the cost panel's totals and its chart's reported renders (issue 23: +2); the
# operations log's newest entries (issue 35: +1).
PAGE_QUERIES = 17


def _turn_ids(section) -> list[str]:
    return [part.turn_id for part in section.turns]


@pytest.mark.django_db
def test_turns_are_listed_in_order_with_their_blocks(support, compacted):
    conversation, _timeline = compacted
    response = support.get(urls.conversation(conversation.pk))
    assert response.status_code == 200
    html = response.content.decode()
    positions = [html.index(f'id="turn-turn_t{n:03d}"') for n in range(1, 9)]
    assert positions == sorted(positions)
    parts = [part for section in response.context["sections"] for part in section.turns]
    assert [p.turn_id for p in parts] == [f"turn_t{n:03d}" for n in range(1, 9)]
    fifth = parts[4]
    assert [row.type for row in fifth.blocks] == [
        b.TURN_HEADER,
        b.USER_PROMPT,
        b.NOTES,
        b.TOOL_CALL,
        b.TOOL_RESULT,
        b.ASSISTANT_COMPLETION,
    ]
    assert [row.seq for row in fifth.blocks] == sorted(row.seq for row in fifth.blocks)
    # seq, type, author, path, tokens and a preview per block
    row = fifth.blocks[4]
    assert row.path == "tc:turn_t005.tc_t005x0.result"
    assert f">{row.seq}</a>" in html and row.path in html
    assert row.preview.startswith("Result 5: The restaurant list") and row.preview.endswith("…")
    assert row.tokens == Block.objects.get(pk=row.pk).tokens


@pytest.mark.django_db
def test_hidden_blocks_show_their_reason_and_replacement_text(support, compacted):
    conversation, _ = compacted
    html = support.get(urls.conversation(conversation.pk)).content.decode()
    hidden_rows = re.findall(r'<tr class="tl-block tl-hidden".*?</tr>', html, flags=re.S)
    assert len(hidden_rows) == 2  # one compacted, one visible
    for row in hidden_rows:
        assert "hidden · ttl" in row
        assert "Replaced by:</b> [pruned: tool output, read it by path]" in row
        assert '<details class="tl-details tl-hidden-original">' in row


@pytest.mark.django_db
def test_compacted_turns_are_collapsed_under_their_summary(support, compacted):
    conversation, timeline = compacted
    compaction = Compaction.objects.get(timeline=timeline)
    response = support.get(urls.conversation(conversation.pk))
    compacted_section, visible_section = response.context["sections"]
    assert compacted_section.panel.compaction.pk == compaction.pk
    assert (
        _turn_ids(compacted_section) == compaction.covered_turn_ids == [f"turn_t{n:03d}" for n in range(1, 5)]
    )
    assert visible_section.panel is None
    assert _turn_ids(visible_section) == [f"turn_t{n:03d}" for n in range(5, 9)]
    html = response.content.decode()
    # Collapsed: a <details> without "open" holds the compacted turns, before the visible window.
    collapsed = html.index('<details class="tl-details tl-compacted-turns">')
    assert (
        collapsed
        < html.index('id="turn-turn_t001"')
        < html.index("Visible window")
        < html.index('id="turn-turn_t005"')
    )
    summary = compaction.summary_block
    for fact in (
        "Compacted under summary #1",
        summary.path,
        f"{compaction.before_tokens} → {compaction.after_tokens}",
        f"<dd>{compaction.compacted_tokens}</dd>",
        "<dt>Split turn</dt><dd>none</dd>",
        "4: <code",
    ):
        assert fact in html, fact


@pytest.mark.django_db
def test_digest_is_laid_out_as_tables(support, compacted):
    conversation, timeline = compacted
    digest = Compaction.objects.get(timeline=timeline).summary_block.meta["compaction_digest"]
    html = support.get(urls.conversation(conversation.pk)).content.decode()
    digest_html = html[html.index('class="tl-details tl-digest-details"') :]
    digest_html = digest_html[: digest_html.index('class="tl-details tl-compacted-turns"')]
    assert "Artifacts (4)" in digest_html and "Tool outputs (4)" in digest_html
    assert "Memory searches (0)" in digest_html and "Hidden blocks (1)" in digest_html
    assert f"Compacted paths ({len(digest['paths'])})" in digest_html
    hidden_row = re.search(
        r"<tr><td><code[^>]*><a [^>]*>tc:turn_t001\.tc_t001x0\.result</a></code></td><td>ttl</td>",
        digest_html,
    )
    assert hidden_row, "the hidden block is a row of the hidden table"
    assert "[pruned: tool output, read it by path]" in digest_html
    for call_id in digest["tool_call_ids"]:
        assert call_id in digest_html
    assert "<th>tool</th><th>tool call id</th><th>path</th><th>status</th>" in digest_html


@pytest.mark.django_db
def test_a_split_turn_shows_its_prefix_under_the_summary_and_the_rest_visible(support, tenant):
    conversation, timeline = split_turn_conversation(tenant)
    response = support.get(urls.conversation(conversation.pk))
    compacted_section, visible_section = response.context["sections"]
    prefix, rest = compacted_section.turns[-1], visible_section.turns[0]
    assert prefix.turn_id == rest.turn_id == "turn_long"
    assert prefix.split and rest.split and rest.continued and not prefix.continued
    compaction = Compaction.objects.get(timeline=timeline)
    assert (
        max(r.seq for r in prefix.blocks) < compaction.first_retained_seq <= min(r.seq for r in rest.blocks)
    )
    html = response.content.decode()
    assert '<dt>Split turn</dt><dd><code class="tl-code">turn_long</code></dd>' in html
    assert "(continued)" in html


@pytest.mark.django_db
def test_named_contexts_are_listed_and_can_be_switched(support, compacted):
    conversation, _ = compacted
    attempt = timeline_get_or_create(conversation=conversation, name="attempt_a")
    contribute_turns(attempt, turns=2, prefix="a")
    html = support.get(urls.conversation(conversation.pk)).content.decode()
    assert "Named contexts" in html and ">attempt_a</code>" in html
    assert f'href="{urls.conversation(conversation.pk, context="attempt_a")}"' in html
    response = support.get(urls.conversation(conversation.pk), {"context": "attempt_a"})
    assert response.context["timeline"].pk == attempt.pk
    parts = [p.turn_id for s in response.context["sections"] for p in s.turns]
    assert parts == ["turn_a001", "turn_a002"]
    assert support.get(urls.conversation(conversation.pk), {"context": "nope"}).status_code == 404


@pytest.mark.django_db
def test_conversation_page_query_count_is_pinned(support, compacted, django_assert_max_num_queries):
    conversation, _ = compacted
    with django_assert_max_num_queries(PAGE_QUERIES):
        assert support.get(urls.conversation(conversation.pk)).status_code == 200


def _bulk_timeline(tenant, *, turns: int, blocks_per_turn: int) -> tuple:
    """``turns × blocks_per_turn`` blocks written with one bulk_create, nothing computed per row."""
    conversation = conversation_create(tenant=tenant, public_id="conv-10k", title="Ten thousand")
    timeline = Timeline.objects.get(conversation=conversation, name="main")
    kinds = [b.TOOL_CALL, b.TOOL_RESULT, b.NOTES]
    rows = []
    seq = 1
    for turn in range(turns):
        turn_id = f"turn_{turn:05d}"
        for index in range(blocks_per_turn):
            kind = b.TURN_HEADER if index == 0 else b.USER_PROMPT if index == 1 else kinds[index % 3]
            rows.append(
                Block(
                    timeline=timeline,
                    seq=seq,
                    turn_id=turn_id,
                    type=kind,
                    author="user" if index == 1 else "react",
                    text=f"block {seq}",
                    tokens=10,
                )
            )
            seq += 1
    Block.objects.bulk_create(rows, batch_size=2000)
    Timeline.objects.filter(pk=timeline.pk).update(next_seq=seq)
    return conversation, timeline


@pytest.mark.django_db
def test_ten_thousand_blocks_render_one_page_of_turns(support, tenant, django_assert_max_num_queries):
    conversation, timeline = _bulk_timeline(tenant, turns=500, blocks_per_turn=20)
    assert Block.objects.filter(timeline=timeline).count() == 10_000
    with django_assert_max_num_queries(PAGE_QUERIES):
        response = support.get(urls.conversation(conversation.pk))
    assert response.status_code == 200
    page = response.context["page_obj"]
    assert page.paginator.count == 500 and page.paginator.num_pages == 500 // TURNS_PER_PAGE
    parts = [p for s in response.context["sections"] for p in s.turns]
    assert [p.turn_id for p in parts] == [f"turn_{n:05d}" for n in range(TURNS_PER_PAGE)]
    html = response.content.decode()
    assert html.count('<div class="tl-turn"') == TURNS_PER_PAGE
    assert html.count('<tr class="tl-block') == TURNS_PER_PAGE * 20
    assert "Turns 1–20 of 500" in html

    last = support.get(urls.conversation(conversation.pk, page="25"))
    assert [p.turn_id for s in last.context["sections"] for p in s.turns][-1] == "turn_00499"
    assert support.get(urls.conversation(conversation.pk, page="9999")).context["page_obj"].number == 25


@pytest.mark.django_db
def test_a_huge_turn_shows_its_first_blocks_and_links_to_the_rest(support, tenant):
    conversation, _timeline = _bulk_timeline(tenant, turns=1, blocks_per_turn=BLOCKS_PER_TURN + 50)
    response = support.get(urls.conversation(conversation.pk))
    (part,) = [p for s in response.context["sections"] for p in s.turns]
    assert len(part.blocks) == BLOCKS_PER_TURN and part.more_blocks == 50
    assert "… and 50 more blocks in this turn" in response.content.decode()


@pytest.mark.django_db
def test_block_text_with_script_and_html_is_escaped(support, compacted):
    conversation, timeline = compacted
    turn_start(timeline=timeline, turn_id="turn_xss", prompt='<script>alert("p")</script>')
    blocks_append(
        timeline=timeline,
        blocks=[
            NewBlock(
                type=b.ASSISTANT_COMPLETION,
                author="assistant",
                turn_id="turn_xss",
                text='<img src=x onerror="alert(1)"><b>bold</b>',
            )
        ],
    )
    Block.objects.filter(timeline=timeline, turn_id="turn_xss", type=b.USER_PROMPT).update(
        hidden=True, replacement_text="<script>evil()</script>", hidden_reason="<i>r</i>"
    )
    html = support.get(urls.conversation(conversation.pk)).content.decode()
    assert "<script>alert" not in html and "<script>evil" not in html
    assert "<img src=x" not in html and "<b>bold</b>" not in html and "<i>r</i>" not in html
    assert "&lt;script&gt;alert(&quot;p&quot;)&lt;/script&gt;" in html
    assert "&lt;script&gt;evil()&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&lt;b&gt;bold&lt;/b&gt;" in html
    block = Block.objects.get(timeline=timeline, turn_id="turn_xss", type=b.ASSISTANT_COMPLETION)
    block_page = support.get(urls.change("block", block.pk)).content.decode()
    assert "<img src=x" not in block_page and "&lt;img src=x onerror" in block_page


@pytest.mark.django_db
def test_unknown_conversation_redirects_with_a_message_like_any_admin_object(support, db):
    response = support.get(urls.conversation(999_999), follow=True)
    assert response.redirect_chain == [("/admin/", 302)]
    assert "doesn’t exist" in response.content.decode()


@pytest.mark.django_db
def test_each_summary_collapses_the_range_it_compacted(support, compacted):

    conversation, timeline = compacted
    contribute_turns(timeline, turns=8, start=9)
    second = compact(timeline)
    response = support.get(urls.conversation(conversation.pk))
    sections = response.context["sections"]
    assert [s.panel.number if s.panel else None for s in sections] == [1, 2, None]
    first_ids, second_ids, visible_ids = (_turn_ids(s) for s in sections)
    assert first_ids == [f"turn_t{n:03d}" for n in range(1, 5)]
    assert second_ids[0] == "turn_t005" and set(second_ids) <= set(second.covered_turn_ids) | {"turn_t008"}
    assert visible_ids[-1] == "turn_t016"
    html = response.content.decode()
    assert "superseded by a later summary" in html
    assert html.count('<details class="tl-details tl-compacted-turns">') == 2


@pytest.mark.django_db
def test_blocks_cleared_from_the_view_are_marked(support, compacted):
    conversation, timeline = compacted
    Timeline.objects.filter(pk=timeline.pk).update(view_start_seq=10)
    response = support.get(urls.conversation(conversation.pk))
    rows = [r for s in response.context["sections"] for p in s.turns for r in p.blocks]
    assert {r.seq for r in rows if r.cleared} == set(range(1, 10))
    assert "cleared from view" in response.content.decode()
