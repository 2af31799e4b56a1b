"""The render's ``cache`` explanation through HTTP: how much of the previous render's prefix the
provider could reuse, where it first changed, and why."""

import pytest

from tests.factories import add_turn, add_turns
from timeline_app.models import RenderRecord

pytestmark = pytest.mark.django_db
BASE = "/api/v1/conversations/c1"
T0 = "2026-03-01T12:00:00Z"


def render(owner, now=T0, **body):
    response = owner.post(f"{BASE}/render/", {"now": now, **body})
    assert response.status_code == 200, response.content
    return response.json()


def test_the_first_render_says_so(owner, conversation):
    add_turns(conversation.timelines.get(), 2)
    cache = render(owner)["cache"]
    assert cache == {
        "previous_render_at": None,
        "reused_prefix_tokens": 0,
        "first_changed_index": 0,
        "first_changed_path": "turn.header#1",  # a header has no path: type#seq
        "reason": "first_render",
    }


def test_an_append_keeps_the_whole_previous_prefix(owner, conversation):
    timeline = conversation.timelines.get()
    add_turns(timeline, 2)
    first = render(owner)
    add_turn(timeline, 3)
    second = render(owner, now="2026-03-01T12:01:00Z")
    cache = second["cache"]
    assert cache["reason"] == "appended_only"
    assert cache["reused_prefix_tokens"] == first["tokens"]["visible"] > 0
    assert cache["previous_render_at"] == "2026-03-01T12:00:00Z"
    assert cache["first_changed_path"].startswith("turn.header#")
    assert second["blocks"][cache["first_changed_index"]]["text"].startswith("[TURN turn_3]")


def test_hiding_an_early_block_names_it_as_the_first_change(owner, conversation):
    timeline = conversation.timelines.get()
    add_turns(timeline, 3)
    render(owner)
    path = "tc:turn_1.tc_1x1.result"
    hidden = owner.post(f"{BASE}/hide/", {"path": path, "replacement_text": "[hidden: read it by path]"})
    assert hidden.status_code == 200
    body = render(owner, now="2026-03-01T12:01:00Z")
    cache = body["cache"]
    assert cache["reason"] == "hidden"
    assert cache["first_changed_path"] == path
    assert "[hidden: read it by path]" in body["blocks"][cache["first_changed_index"]]["text"]
    assert 0 < cache["reused_prefix_tokens"] < body["tokens"]["visible"]
    assert RenderRecord.objects.order_by("-id").values_list("hidden_count", flat=True)[0] == 1


def test_a_render_after_the_cache_ttl_reuses_nothing(owner, conversation):
    add_turns(conversation.timelines.get(), 2)
    render(owner)
    cache = render(owner, now="2026-03-01T12:10:00Z")["cache"]
    assert cache["reason"] == "ttl_expired"
    assert cache["reused_prefix_tokens"] == 0


def test_a_compaction_since_the_previous_render_is_the_reason(owner, conversation):
    add_turns(conversation.timelines.get(), 6)
    render(owner)
    compacted = owner.post(f"{BASE}/compact/", {"force": True, "wait": True}).json()
    assert compacted["status"] == "applied"
    body = render(owner, now="2026-03-01T12:01:00Z")
    assert body["cache"]["reason"] == "compacted"
    assert body["cache"]["first_changed_index"] == 0, "the summary now opens the prefix"


def test_other_render_settings_are_the_reason(owner, conversation):
    add_turns(conversation.timelines.get(), 2)
    render(owner)
    cache = render(owner, now="2026-03-01T12:01:00Z", exclude_contributions=["react.notes"])["cache"]
    assert cache["reason"] == "settings_changed"


def test_ttl_expiry_wins_over_other_reasons(owner, conversation):
    add_turns(conversation.timelines.get(), 2)
    render(owner)
    cache = render(owner, now="2026-03-01T13:00:00Z", format="openai")["cache"]
    assert cache["reason"] == "ttl_expired"


def test_every_render_is_recorded_with_its_explanation(owner, conversation):
    add_turns(conversation.timelines.get(), 2)
    render(owner)
    render(owner, now="2026-03-01T12:00:30Z")
    records = list(RenderRecord.objects.order_by("id").values_list("reason", "pruning_status"))
    assert records == [("first_render", "armed"), ("appended_only", "fresh")]


def test_a_cleared_view_is_another_change_not_a_hide(owner, conversation):
    messages = f"{BASE}/contexts/main/messages/"
    sent = owner.post(messages, {"messages": [{"role": "user", "content": "first question"}]})
    assert sent.status_code == 201
    render(owner)
    assert owner.delete(messages).status_code in (200, 204)
    owner.post(messages, {"messages": [{"role": "user", "content": "a new start"}]})
    cache = render(owner, now="2026-03-01T12:01:00Z")["cache"]
    assert cache["reason"] == "other"
    assert cache["first_changed_index"] == 0 and cache["reused_prefix_tokens"] == 0


def test_the_history_is_trimmed_to_its_count_and_age(owner, conversation, settings):
    from django.utils import timezone

    from timeline_app.tasks import trim_render_history

    add_turns(conversation.timelines.get(), 1)
    for second in range(5):
        render(owner, now=f"2026-03-01T12:00:0{second}Z")
    other = owner.post("/api/v1/conversations/", {"id": "c2"}).json()["id"]
    owner.post(f"/api/v1/conversations/{other}/render/", {})
    settings.TIMELINE_RENDER_HISTORY_MAX = 2
    settings.TIMELINE_RENDER_HISTORY_DAYS = 10_000
    assert trim_render_history() == 3
    kept = RenderRecord.objects.filter(timeline__conversation=conversation).order_by("rendered_at")
    assert [r.rendered_at.second for r in kept] == [3, 4], "the newest two of c1"
    assert RenderRecord.objects.filter(timeline__conversation__public_id="c2").count() == 1
    RenderRecord.objects.filter(timeline__conversation__public_id="c2").update(
        rendered_at=timezone.now() - timezone.timedelta(days=20)
    )
    settings.TIMELINE_RENDER_HISTORY_DAYS = 7
    trim_render_history()
    assert not RenderRecord.objects.filter(timeline__conversation__public_id="c2").exists()


def test_a_record_in_the_encoding_before_bounded_fingerprints_still_reads(owner, conversation):
    """Records written before migration 0009 keep a digest per segment and the seqs as packed
    deltas (stride 0): the next render compares with them as before."""
    from timeline_app.rendering.pipeline import RenderOptions
    from timeline_app.rendering.request_head import request_head
    from timeline_app.services.render import timeline_render_preview

    def as_the_api_renders():  # no system prompt: the head of the empty text
        outcome = timeline_render_preview(timeline=timeline, options=RenderOptions(), head=request_head())
        return outcome.rendered.prefix

    timeline = conversation.timelines.get()
    add_turns(timeline, 3)
    first = render(owner)
    prefix = as_the_api_renders()
    RenderRecord.objects.filter(timeline=timeline).update(
        segment_stride=0, segment_digests=prefix.packed_digests(), segment_seqs=prefix.packed_seqs()
    )
    add_turn(timeline, 4)
    cache = render(owner, now="2026-03-01T12:01:00Z")["cache"]
    assert (cache["reason"], cache["reused_prefix_tokens"]) == ("appended_only", first["tokens"]["visible"])
    assert RenderRecord.objects.order_by("-id").values_list("segment_stride", flat=True)[0] == 1

    RenderRecord.objects.filter(timeline=timeline).update(segment_stride=0)  # the newest, as if old
    latest = RenderRecord.objects.order_by("-id").first()
    prefix = as_the_api_renders()
    RenderRecord.objects.filter(pk=latest.pk).update(
        segment_digests=prefix.packed_digests(), segment_seqs=prefix.packed_seqs()
    )
    path = "tc:turn_2.tc_2x0.result"
    assert owner.post(f"{BASE}/hide/", {"path": path, "replacement_text": "[gone]"}).status_code == 200
    cache = render(owner, now="2026-03-01T12:02:00Z")["cache"]
    assert (cache["reason"], cache["first_changed_path"]) == ("hidden", path)
