"""Issue 25: a render history row opens the context exactly as that render returned it, rebuilt
from the append-only blocks and what the record kept (its blocks, the hidden set, the settings,
format, filters and system prompt digest); "exact" means every prefix fingerprint and the cache
points equal the recorded ones. Renders before and after a manual hide, a TTL prune and a
compaction — checked after the conversation moved on (more hides, new settings), so nothing of
today's state may leak into the past."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from tests.admin import urls
from tests.admin.builders import compact, contribute_turns
from timeline_app.domain.settings import RenderSettings
from timeline_app.models import Block, Conversation, RenderRecord, Tenant, Timeline
from timeline_app.rendering.pipeline import RenderOptions, render_window
from timeline_app.rendering.request_head import RequestHead
from timeline_app.services.conversations import conversation_create
from timeline_app.services.hiding import blocks_hide, blocks_unhide
from timeline_app.services.render import timeline_render, timeline_render_preview

pytestmark = pytest.mark.django_db


def past_render_url(conversation: Conversation, record: RenderRecord, context: str = "main") -> str:
    url = reverse("admin:timeline_app_conversation_past_render", args=[conversation.pk, record.pk])
    return f"{url}?context={context}"


def _history(tenant: Tenant, public_id: str = "conv-past") -> tuple[Conversation, Timeline, list[str]]:
    """Renders in several formats around a manual hide, a TTL prune and a compaction; then the
    conversation moves on. Returns the pruning statuses of the renders, oldest first."""
    conversation = conversation_create(
        tenant=tenant,
        public_id=public_id,
        title="Past renders",
        settings={"max_tokens": 6000, "ttl_keep_recent_turns": 2},
    )
    timeline = Timeline.objects.get(conversation=conversation, name="main")
    start = timezone.now() - timedelta(hours=5)
    contribute_turns(timeline, turns=3)

    def render(at: timedelta, **options) -> str:
        timeline.refresh_from_db()
        outcome = timeline_render(
            timeline=timeline,
            options=RenderOptions(**options),
            now=start + at,
            head=RequestHead(system_tokens=120, digest="digest-of-the-system-prompt"),
        )
        return outcome.pruning_status

    statuses = [render(timedelta(0), format="anthropic")]
    blocks_hide(timeline=timeline, path="tc:turn_t002.tc_t002x0.result", replacement_text="[hidden by hand]")
    statuses.append(render(timedelta(seconds=30), format="openai"))
    contribute_turns(timeline, turns=1, start=4)
    statuses.append(render(timedelta(hours=2), format="text", include_sources=True))  # TTL prune
    compact(timeline)
    statuses.append(render(timedelta(hours=2, seconds=30), format="anthropic"))
    contribute_turns(timeline, turns=1, start=5)
    statuses.append(
        render(timedelta(hours=2, minutes=1), format="text", exclude_contributions=("react.note",))
    )
    # Later: another hide and new settings. The past renders must not see either.
    blocks_hide(timeline=timeline, path="tc:turn_t005.tc_t005x0.result", replacement_text="[later]")
    Conversation.objects.filter(pk=conversation.pk).update(
        settings={"max_tokens": 9000, "ttl_keep_recent_turns": 1, "cache_point_offset_rounds": 1}
    )
    return conversation, timeline, statuses


def test_every_past_render_is_rebuilt_exactly_around_hide_ttl_prune_and_compaction(support, tenant):
    conversation, timeline, statuses = _history(tenant)
    # Another conversation of the tenant holds blocks of the same seqs with other texts: a window
    # read that lost its timeline filter would rebuild from them and not be exact.
    planted = conversation_create(tenant=tenant, public_id="conv-planted")
    contribute_turns(Timeline.objects.get(conversation=planted, name="main"), turns=6, prefix="p")
    assert "pruned" in statuses[2], statuses  # the third render pruned by TTL
    records = list(RenderRecord.objects.filter(timeline=timeline).order_by("id"))
    assert len(records) == 5
    assert records[0].summary_seq is None and records[3].summary_seq is not None  # compacted between
    assert records[0].hidden_count == 0 < records[1].hidden_count < records[2].hidden_count
    for record in records:
        response = support.get(past_render_url(conversation, record))
        assert response.status_code == 200
        result = response.context["result"]
        assert result.exact, (record.pk, result.problems)
        assert result.assumed == []
        assert result.segment_count == record.segment_count
        html = response.content.decode()
        assert 'id="tl-replay-verdict">exact<' in html
    # The text of what it returned: the hidden-by-hand block's replacement in the second render, and
    # the later hide nowhere before it happened.
    second = support.get(past_render_url(conversation, records[1])).content.decode()
    assert "[hidden by hand]" in second and "[later]" not in second
    third = support.get(past_render_url(conversation, records[2])).content.decode()
    assert "sources pool" in third  # named as not reconstructed: not part of the fingerprint


def test_the_history_rows_link_to_the_past_render(support, tenant):
    conversation, timeline, _ = _history(tenant)
    html = support.get(urls.conversation(conversation.pk)).content.decode()
    for record in RenderRecord.objects.filter(timeline=timeline):
        assert past_render_url(conversation, record).replace("&", "&amp;") in html


def _legacy_history(tenant: Tenant, *, stride0: bool) -> tuple[Conversation, RenderRecord, RenderRecord]:
    """Two renders (the second with a hidden block) as records from before migration 0012 keep
    them: no inputs, no window shape, no hidden set; ``stride0``: also the fingerprint in
    migration 0007's encoding (a digest and a seq per segment). Another block is hidden later."""
    conversation = conversation_create(tenant=tenant, public_id="conv-legacy", title="Legacy")
    timeline = Timeline.objects.get(conversation=conversation, name="main")
    contribute_turns(timeline, turns=2)

    def render(*, format: str, system_tokens: int = 0) -> None:
        timeline.refresh_from_db()
        options, head = RenderOptions(format=format), RequestHead(system_tokens=system_tokens)
        timeline_render(timeline=timeline, options=options, head=head)
        if stride0:
            prefix = timeline_render_preview(timeline=timeline, options=options, head=head).rendered.prefix
            RenderRecord.objects.filter(pk=RenderRecord.objects.latest("id").pk).update(
                segment_stride=0, segment_digests=prefix.packed_digests(), segment_seqs=prefix.packed_seqs()
            )

    render(format="text")
    blocks_hide(timeline=timeline, path="tc:turn_t001.tc_t001x0.result", replacement_text="[x]")
    render(format="openai", system_tokens=5)
    RenderRecord.objects.filter(timeline=timeline).update(
        render_inputs={},
        hidden_seqs=b"",
        window_first_seq=None,
        window_last_seq=None,
        window_skipped_seqs=b"",
    )
    blocks_hide(timeline=timeline, path="tc:turn_t002.tc_t002x0.result", replacement_text="[y]")
    plain, hidden = RenderRecord.objects.filter(timeline=timeline).order_by("id")
    return conversation, plain, hidden


@pytest.mark.parametrize("stride0", [True, False], ids=["per-segment-record", "bounded-record"])
def test_a_render_recorded_without_inputs_says_what_it_assumed_and_whether_that_held(
    support, tenant, stride0
):
    """Renders recorded before migration 0012 keep no inputs: replayed with today's settings, each
    format and no system digest, they are exact only if the fingerprint agrees, and say so. A
    per-segment record (stride 0) names its blocks; a bounded one (migration 0009 to 0012) is
    replayed from today's window, cut at its segment count, and says that too."""
    conversation, plain, hidden = _legacy_history(tenant, stride0=stride0)
    settings_assumed = "settings, format and contribution filters (today's settings, each format tried)"
    window_assumed = "which blocks the window held (today's window, cut at the recorded segment count)"

    result = support.get(past_render_url(conversation, plain)).context["result"]
    assert result.exact and result.options.format == "text", result.problems
    assert result.assumed == ([settings_assumed] if stride0 else [settings_assumed, window_assumed])

    page = support.get(past_render_url(conversation, hidden))
    result = page.context["result"]
    assert not result.exact
    assert "which blocks were hidden (today's hide state assumed)" in result.assumed
    differs = "differs from segment" if stride0 else "differs from chunk"
    assert any(differs in problem for problem in result.problems), result.problems
    assert 'id="tl-replay-verdict">not exact<' in page.content.decode()


def test_a_render_of_another_conversation_or_context_is_not_found(support, tenant):
    conversation, _, _ = _history(tenant)
    other, other_timeline, _ = _history(tenant, public_id="conv-other")
    foreign = RenderRecord.objects.filter(timeline=other_timeline).first()
    assert support.get(past_render_url(conversation, foreign)).status_code == 404
    assert support.get(past_render_url(other, foreign)).status_code == 200
    assert support.get(past_render_url(other, foreign, context="attempt_a")).status_code == 404


def test_a_window_over_1024_segments_and_a_hide_state_changed_since_are_rebuilt_exactly(support, tenant):
    """The record keeps a bounded fingerprint (a checkpoint every 2 segments here) and the window's
    shape, not its blocks: renders of a 1,000+ block window before a hide, after it, and after that
    block was shown again and another hidden are each rebuilt with the hide state they had (the
    recorded hidden set, not today's), and compared checkpoint by checkpoint."""
    conversation = conversation_create(
        tenant=tenant, public_id="conv-long", title="Long", settings={"max_tokens": 1_000_000}
    )
    timeline = Timeline.objects.get(conversation=conversation, name="main")
    contribute_turns(timeline, turns=175)  # 6 blocks a turn
    first_path, second_path = "tc:turn_t090.tc_t090x0.result", "tc:turn_t120.tc_t120x0.result"

    def render() -> RenderRecord:
        timeline.refresh_from_db()
        timeline_render(
            timeline=timeline, options=RenderOptions(format="anthropic"), head=RequestHead(system_tokens=50)
        )
        return RenderRecord.objects.latest("id")

    before = render()
    blocks_hide(timeline=timeline, path=first_path, replacement_text="[hidden then]")
    during = render()
    blocks_hide(timeline=timeline, path=second_path, replacement_text="[hidden later]")
    after = render()
    assert before.segment_count > 1024 and before.segment_stride == 2
    assert (before.hidden_count, during.hidden_count, after.hidden_count) == (0, 1, 2)
    assert len(bytes(before.window_skipped_seqs)) == 0 and len(bytes(during.hidden_seqs)) <= 3

    for record, shows, not_shown in (
        (before, None, "[hidden"),
        (during, "[hidden then]", "[hidden later]"),
        (after, "[hidden later]", None),
    ):
        page = support.get(past_render_url(conversation, record))
        result = page.context["result"]
        assert result.exact, (record.pk, result.problems)
        assert result.segment_count == record.segment_count
        rendered_text = "\n".join(part.get("text", "") for part in result.rendered.blocks)
        assert shows is None or shows in rendered_text
        assert not_shown is None or not_shown not in rendered_text

    # Not exact, and where: the record of the render with the first hide, told nothing was hidden.
    RenderRecord.objects.filter(pk=during.pk).update(hidden_seqs=b"")
    result = support.get(past_render_url(conversation, during)).context["result"]
    assert not result.exact
    [problem] = result.problems
    paths = result.rendered.prefix.paths
    chunk = paths.index(first_path) // 2
    assert problem.startswith(
        f"the prefix fingerprint differs from chunk {chunk + 1} of {-(-during.segment_count // 2)} "
        f"(segments {2 * chunk + 1}–{2 * chunk + 2}, from {paths[2 * chunk]}): same blocks, rendered differently"
    ), problem

    # A block shown again since loses its replacement text: said so, by path.
    blocks_unhide(timeline=timeline, path=first_path)
    result = support.get(past_render_url(conversation, after)).context["result"]
    assert not result.exact
    assert result.problems[-1] == (
        f"hidden then and shown since, so their replacement text is not kept: {first_path}"
    ), result.problems


@pytest.mark.parametrize("fmt", ["anthropic_messages", "openai_responses", "openai_chat"])
def test_a_native_render_shows_the_request_it_returned(support, tenant, fmt):
    """A native render's page shows the request body, a message or input item a line, with its
    cache markers; it showed blank lines (the page read the seed format's text parts)."""
    conversation = conversation_create(
        tenant=tenant, public_id="conv-native", title="Native", settings={"cache_min_tokens": 0}
    )
    timeline = Timeline.objects.get(conversation=conversation, name="main")
    contribute_turns(timeline, turns=3)
    timeline_render(timeline=timeline, options=RenderOptions(format=fmt))
    record = RenderRecord.objects.get(timeline=timeline)
    html = support.get(past_render_url(conversation, record)).content.decode()
    assert 'id="tl-replay-verdict">exact<' in html
    shown = html.split('id="tl-past-render">', 1)[1].split("</pre>", 1)[0]
    # Every turn's prompt is on the page, inside the native messages.
    for number in (1, 2, 3):
        assert f"turn_t00{number}" in shown, shown[:2000]
    assert ("&quot;role&quot;: &quot;user&quot;" in shown) or (
        "&quot;type&quot;: &quot;message&quot;" in shown
    )
    if fmt == "anthropic_messages":
        assert "cache_control" in shown


def test_a_render_recorded_without_inputs_keeps_todays_valid_overrides_when_another_broke(support, tenant):
    """A record without inputs is replayed with today's settings, read as a render reads them: a
    stored override that no longer validates falls back to its default alone, and the valid ones
    still apply (all of them dropped, the cache points the override placed could not be rebuilt;
    the page's own fallback, before, answered a dropped key with a 500)."""
    valid = {"cache_point_offset_rounds": 1}
    conversation = conversation_create(tenant=tenant, public_id="conv-broken", settings=valid)
    timeline = Timeline.objects.get(conversation=conversation, name="main")
    contribute_turns(timeline, turns=4)
    timeline_render(timeline=timeline, options=RenderOptions(format="text"))
    record = RenderRecord.objects.get(timeline=timeline)
    RenderRecord.objects.filter(pk=record.pk).update(
        render_inputs={}, window_first_seq=None, window_last_seq=None, window_skipped_seqs=b""
    )
    Conversation.objects.filter(pk=conversation.pk).update(settings={**valid, "retired_setting": 1})
    stored = [row.to_value() for row in Block.objects.filter(timeline=timeline).order_by("seq")]
    defaults = render_window(stored, settings=RenderSettings(), options=RenderOptions(format="text"))
    assert record.cache_points and defaults.cache_points != record.cache_points
    result = support.get(past_render_url(conversation, record)).context["result"]
    assert result.exact and result.options.format == "text", result.problems
