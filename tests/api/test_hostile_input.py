"""Issue 12, points 6, 7, 8, 9: every bad input is a 4xx in the one error shape, nothing is
stored, and the conversation still answers GET, render and export afterwards."""

from __future__ import annotations

import json

import pytest

from timeline_app.models import Block, Compaction, Conversation, Source, Timeline

from .hostile import C, assert_error, assert_still_readable

pytestmark = pytest.mark.django_db

NUL = "a\u0000b"
SURROGATE = "a\ud800b"


def snapshot() -> tuple[int, int, int, int, int]:
    return (
        Conversation.objects.count(),
        Timeline.objects.count(),
        Block.objects.count(),
        Source.objects.count(),
        Compaction.objects.count(),
    )


def raw_json(value: object) -> str:
    """JSON text with lone surrogates written as ``\\ud800`` escapes (what a hostile client sends)."""
    return json.dumps(value, ensure_ascii=True)


# ---------------------------------------------------------------- 6: times out of range


@pytest.mark.parametrize(
    "now", ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00", "0001-01-01T00:00:00Z"]
)
def test_render_now_outside_the_round_trip_range_is_a_400_and_bricks_nothing(owner, conversation, now):
    owner.post(f"{C}/c1/turns/", {"turn_id": "turn_a", "prompt": "hi"})
    before = Timeline.objects.get(conversation=conversation).cache_last_touch_at
    error = assert_error(owner.post(f"{C}/c1/render/", {"now": now}), 400)
    assert "now" in error["details"]
    assert Timeline.objects.get(conversation=conversation).cache_last_touch_at == before
    assert_still_readable(owner, "c1")


def test_import_with_a_start_time_past_year_9999_in_utc_is_a_400_and_stores_nothing(owner, conversation):
    exported = owner.get(f"{C}/c1/timeline/").json()
    before = snapshot()
    payload = {**exported, "id": "copy", "conversation_started_at": "9999-12-31T23:59:59-14:00"}
    error = assert_error(owner.post(f"{C}/import/", payload), 400)
    assert "conversation_started_at" in error["details"]
    assert snapshot() == before
    assert owner.get(f"{C}/copy/").status_code == 404
    assert_still_readable(owner, "c1")


@pytest.mark.parametrize(
    ("url", "body", "field"),
    [
        ("blocks", {"blocks": [{"type": "react.notes", "ts": "0001-01-01T00:00:00+01:00"}]}, "blocks"),
        ("turns", {"prompt": "x", "ts": "9999-12-31T23:00:00-02:00"}, "ts"),
        (
            "messages",
            {"messages": [{"role": "user", "content": "x", "timestamp": "0001-01-01T00:30:00+01:00"}]},
            "messages[0].timestamp",
        ),
    ],
)
def test_block_and_message_times_outside_the_range_are_a_400(owner, conversation, url, body, field):
    before = snapshot()
    error = assert_error(owner.post(f"{C}/c1/{url}/", body), 400)
    assert field in error["details"]
    assert snapshot() == before
    assert_still_readable(owner, "c1")


# ---------------------------------------------------------------- 7: NUL and lone surrogates


@pytest.mark.parametrize("bad", [NUL, SURROGATE])
@pytest.mark.parametrize(
    ("url", "make"),
    [
        ("c1/blocks/", lambda bad: {"blocks": [{"type": "react.notes", "text": "ok", "meta": {bad: 1}}]}),
        ("c1/blocks/", lambda bad: {"blocks": [{"type": "react.notes", "meta": {"k": [bad]}}]}),
        ("c1/blocks/", lambda bad: {"blocks": [{"type": "react.notes", "text": bad}]}),
        ("c1/sources/", lambda bad: {"sources": [{"url": "https://a.example", "meta": {"x": {bad: bad}}}]}),
        ("c1/messages/", lambda bad: {"messages": [{"role": "user", "content": bad}]}),
        ("c1/render/", lambda bad: {"system": bad}),
    ],
)
def test_nul_and_lone_surrogates_in_json_keys_and_values_are_a_400(owner, conversation, url, make, bad):
    before = snapshot()
    response = owner.post_raw(f"{C}/{url}", raw_json(make(bad)))
    error = assert_error(response, 400)
    assert error["details"], "the details name where the character is"
    assert snapshot() == before
    assert_still_readable(owner, "c1")


@pytest.mark.parametrize("bad", [NUL, SURROGATE])
def test_nul_and_lone_surrogates_in_an_import_meta_are_a_400_and_store_nothing(owner, conversation, bad):
    owner.post(f"{C}/c1/turns/", {"turn_id": "turn_a", "prompt": "hi"})
    exported = owner.get(f"{C}/c1/timeline/").json()
    exported["blocks"][0]["meta"] = {"note": {bad: "x"}}
    before = snapshot()
    assert_error(owner.post_raw(f"{C}/import/", raw_json({**exported, "id": "copy"})), 400)
    assert snapshot() == before


@pytest.mark.parametrize(("url", "param"), [("c1/search/", "q"), ("c1/blocks/", "path")])
def test_nul_in_query_parameters_is_a_400(owner, conversation, url, param):
    owner.post(f"{C}/c1/turns/", {"turn_id": "turn_a", "prompt": "hi"})
    error = assert_error(owner.client.get(f"{C}/{url}?{param}=ar%3Aa%00b"), 400)
    assert param in error["details"]
    assert_still_readable(owner, "c1")


def test_admin_render_preview_with_a_nul_context_is_a_400_in_the_error_shape(
    admin_client, owner, conversation
):
    response = admin_client.get(f"/admin/timeline_app/conversation/{conversation.pk}/render/?context=ma%00in")
    assert_error(response, 400)


# ---------------------------------------------------------------- 8: import bounds and uniqueness


def exported_with_sources(owner) -> dict:
    owner.post(f"{C}/c1/turns/", {"turn_id": "turn_a", "prompt": "hi"})
    owner.post(f"{C}/c1/sources/", {"sources": [{"url": "https://a.example"}, {"url": "https://b.example"}]})
    return owner.get(f"{C}/c1/timeline/").json()


def _set_seq(payload: dict, value: int) -> None:
    payload["blocks"][-1]["seq"] = value


def _dup_seq(payload: dict) -> None:
    payload["blocks"][1]["seq"] = payload["blocks"][0]["seq"]


def _dup_sid(payload: dict) -> None:
    payload["sources_pool"][1]["sid"] = payload["sources_pool"][0]["sid"]


def _dup_url(payload: dict) -> None:
    payload["sources_pool"][1]["url"] = payload["sources_pool"][0]["url"]


def _set_sid(payload: dict, value: int) -> None:
    payload["sources_pool"][0]["sid"] = value


def _summary_compaction(payload: dict, **fields) -> None:
    seq = max(b["seq"] for b in payload["blocks"]) + 1
    payload["blocks"].append({"seq": seq, "type": "conv.range.summary", "text": "summary", "path": "su:x"})
    payload["compactions"] = [{"summary_seq": seq, "first_retained_seq": 1, **fields}]


@pytest.mark.parametrize(
    ("case", "change"),
    [
        ("seq at 2^63", lambda p: _set_seq(p, 2**63)),
        ("seq that leaves no room for next_seq", lambda p: _set_seq(p, 2**63 - 1)),
        ("view_start_seq past 2^63 - 1", lambda p: p.update(view_start_seq=2**63)),
        ("sid at 2^31", lambda p: _set_sid(p, 2**31)),
        ("sid that leaves no room for a new source", lambda p: _set_sid(p, 2**31 - 1)),
        ("duplicate seq", _dup_seq),
        ("duplicate sid", _dup_sid),
        ("duplicate url", _dup_url),
        ("tokens at 2^31", lambda p: _summary_compaction(p, before_tokens=2**31)),
        ("unknown compaction key", lambda p: _summary_compaction(p, surprise=1)),
        ("first_retained_seq past the end", lambda p: _summary_compaction(p, first_retained_seq=10**6)),
        ("view_start_seq past the end", lambda p: p.update(view_start_seq=10**6)),
        ("block ts not ISO-8601", lambda p: p["blocks"][0].update(ts="yesterday")),
        (
            "two compactions of one summary",
            lambda p: (_summary_compaction(p), p["compactions"].append(dict(p["compactions"][0]))),
        ),
    ],
)
def test_import_checks_bounds_and_uniqueness_before_writing(owner, conversation, case, change):
    payload = exported_with_sources(owner)
    change(payload)
    before = snapshot()
    assert_error(owner.post(f"{C}/import/", {**payload, "id": "copy"}), 400)
    assert snapshot() == before, case
    assert owner.get(f"{C}/copy/").status_code == 404
    assert_still_readable(owner, "c1")


def test_import_at_the_edge_of_the_bounds_can_still_be_appended_to(owner, conversation):
    payload = exported_with_sources(owner)
    _set_seq(payload, 2**53 - 1)
    _set_sid(payload, 2**30 - 1)
    assert owner.post(f"{C}/import/", {**payload, "id": "copy"}).status_code == 201
    appended = owner.post(f"{C}/copy/blocks/", {"blocks": [{"type": "react.notes", "text": "more"}]})
    assert appended.status_code == 201 and appended.json()["blocks"][0]["seq"] == 2**53
    merged = owner.post(f"{C}/copy/sources/", {"sources": [{"url": "https://new.example"}]})
    assert merged.status_code == 200
    assert_still_readable(owner, "copy")


def test_import_block_count_is_capped_by_a_setting(owner, conversation, settings):
    settings.TIMELINE_MAX_IMPORT_BLOCKS = 1
    payload = exported_with_sources(owner)
    assert len(payload["blocks"]) > 1
    before = snapshot()
    error = assert_error(owner.post(f"{C}/import/", {**payload, "id": "copy"}), 400)
    assert "blocks" in error["details"]
    assert snapshot() == before


def test_import_writes_blocks_in_batches(owner, conversation, monkeypatch):
    from timeline_app.services import export

    monkeypatch.setattr(export, "IMPORT_BATCH", 3)
    sizes: list[int] = []
    original = Block.objects.bulk_create

    def spy(objs, *args, **kwargs):
        sizes.append(len(objs))
        return original(objs, *args, **kwargs)

    monkeypatch.setattr(Block.objects, "bulk_create", spy)
    payload = owner.get(f"{C}/c1/timeline/").json()
    payload["blocks"] = [{"seq": n, "type": "react.notes", "text": f"n{n}"} for n in range(1, 11)]
    assert owner.post(f"{C}/import/", {**payload, "id": "copy"}).status_code == 201
    assert sizes == [3, 3, 3, 1]
    assert Block.objects.filter(timeline__conversation__public_id="copy").count() == 10


# ---------------------------------------------------------------- 9: message blocks on every write path


BAD_MESSAGE_BLOCK = {
    "type": "message.user",
    "text": "hi",
    "meta": {"openai_message": {"content": "hi"}, "message_id": "m1", "timestamp": "2026-01-01T00:00:00Z"},
}


@pytest.mark.parametrize(
    "block",
    [
        BAD_MESSAGE_BLOCK,
        {"type": "message.assistant", "text": "hi"},
        {
            **BAD_MESSAGE_BLOCK,
            "meta": {**BAD_MESSAGE_BLOCK["meta"], "openai_message": {"role": "assistant", "content": "x"}},
        },
        {"type": "openai.message", "meta": {"openai_message": {"role": "wizard"}}},
    ],
)
def test_a_message_block_without_a_valid_openai_message_is_a_400_on_the_blocks_api(
    owner, conversation, block
):
    owner.post(f"{C}/c1/contexts/", {"name": "work"})
    before = snapshot()
    error = assert_error(owner.post(f"{C}/c1/contexts/work/blocks/", {"blocks": [block]}), 400)
    assert any(key.startswith("blocks[0].meta") for key in error["details"])
    assert snapshot() == before
    branched = owner.post(f"{C}/c1/contexts/", {"name": "branch", "branch_from": "work"})
    assert branched.status_code == 201, branched.content
    assert_still_readable(owner, "c1")


def test_a_message_block_without_a_role_is_a_400_on_import_and_stores_nothing(owner, conversation):
    payload = owner.get(f"{C}/c1/timeline/").json()
    payload["blocks"] = [{"seq": 1, **BAD_MESSAGE_BLOCK}]
    before = snapshot()
    error = assert_error(owner.post(f"{C}/import/", {**payload, "id": "copy"}), 400)
    assert "blocks[0].meta.openai_message.role" in error["details"]
    assert snapshot() == before


def test_message_blocks_written_by_the_messages_api_still_branch(owner, conversation):
    sent = owner.post(f"{C}/c1/contexts/work/messages/", {"messages": [{"role": "user", "content": "hi"}]})
    assert sent.status_code == 201
    branched = owner.post(f"{C}/c1/contexts/", {"name": "branch", "branch_from": "work"})
    assert branched.status_code == 201
    assert [m["content"] for m in owner.get(f"{C}/c1/contexts/branch/messages/").json()["messages"]] == ["hi"]


@pytest.mark.parametrize("last", [2**53, 2**53 + 1, 2**62, 2**63 - 2])
def test_an_export_with_seqs_past_2_53_imports_again_equal(owner, conversation, last):
    """Issue 20, point 12c: seqs were bounded below 2^53 on import, so a conversation imported at
    2^53 - 1 and appended to (seq 2^53) could not be imported from its own export. Every seq the
    service can store (up to 2^63 - 2: next_seq must fit its bigint column) now round-trips."""
    payload = exported_with_sources(owner)
    first = {**payload, "id": "big"}
    first["blocks"] = [
        {**blk, "seq": last - len(payload["blocks"]) + n} for n, blk in enumerate(payload["blocks"], 1)
    ]
    assert owner.post(f"{C}/import/", first).status_code == 201
    exported = owner.get(f"{C}/big/timeline/").json()
    assert exported["blocks"][-1]["seq"] == last
    assert owner.post(f"{C}/import/", {**exported, "id": "again"}).status_code == 201
    again = owner.get(f"{C}/again/timeline/").json()
    assert [b["seq"] for b in again["blocks"]] == [b["seq"] for b in exported["blocks"]]
    blank = {"ts": "", "conversation_id": "", "operations": []}
    assert {**again, **blank} == {**exported, **blank}
    # The log travels as it was (new ids), then the import's own entry.
    assert [e["at"] for e in again["operations"][:-1]] == [e["at"] for e in exported["operations"]]
    assert again["operations"][-1]["kind"] == "imported"
    assert_still_readable(owner, "again")


def test_a_full_context_refuses_more_blocks_with_a_409_and_still_renders(owner, conversation):
    payload = exported_with_sources(owner)
    _set_seq(payload, 2**63 - 3)
    assert owner.post(f"{C}/import/", {**payload, "id": "copy"}).status_code == 201
    one = owner.post(f"{C}/copy/blocks/", {"blocks": [{"type": "react.notes", "text": "last"}]})
    assert one.status_code == 201 and one.json()["blocks"][0]["seq"] == 2**63 - 2
    before = snapshot()
    error = assert_error(owner.post(f"{C}/copy/blocks/", {"blocks": [{"type": "react.notes"}]}), 409)
    assert "full" in error["message"]
    assert_error(owner.post(f"{C}/copy/messages/", {"messages": [{"role": "user", "content": "x"}]}), 409)
    assert snapshot() == before
    compacted = owner.post(f"{C}/copy/compact/", {"force": True, "wait": True})
    assert compacted.status_code == 200 and compacted.json()["status"] != "applied"
    assert_still_readable(owner, "copy")
