import pytest

from tests.factories import add_turns
from timeline_app.models import Block, Compaction, Timeline

pytestmark = pytest.mark.django_db
C = "/api/v1/conversations"


def comparable(payload: dict) -> dict:
    body = {k: v for k, v in payload.items() if k not in ("ts", "conversation_id", "operations")}
    body["blocks"] = [{k: v for k, v in blk.items()} for blk in payload["blocks"]]
    return body


def entries(payload: dict) -> list[dict]:
    """The operations log of an export, ids aside (an import gives its entries new ids)."""
    return [{k: v for k, v in entry.items() if k != "id"} for entry in payload["operations"]]


def test_export_import_round_trip_loses_nothing(owner, conversation):
    conversation.settings = {"max_tokens": 5_000, "keep_recent_tokens": 1_500}
    conversation.save()
    timeline = Timeline.objects.get(conversation=conversation)
    add_turns(timeline, 8)
    owner.post(f"{C}/c1/sources/", {"sources": [{"url": "https://a.example", "title": "A", "text": "alpha"}]})
    owner.post(f"{C}/c1/hide/", {"path": "tc:turn_8.tc_8x0.result", "replacement_text": "[hidden by agent]"})
    owner.post(
        f"{C}/c1/turns/",
        {
            "turn_id": "turn_bin",
            "prompt": "see",
            "attachments": [{"name": "x.png", "mime": "image/png", "base64": "iVBORw0KGgo="}],
        },
    )
    owner.post(f"{C}/c1/render/", {})
    assert Compaction.objects.filter(status="applied").exists()

    exported = owner.get(f"{C}/c1/timeline/").json()
    assert exported["version"] == 1 and exported["kind"] == "conv.timeline.v1"
    assert exported["turn_ids"][:2] == ["turn_1", "turn_2"]
    created = owner.post(f"{C}/import/", {**exported, "id": "copy"})
    assert created.status_code == 201, created.content
    assert created.json()["title"] == conversation.title

    again = owner.get(f"{C}/copy/timeline/").json()
    assert comparable(again) == comparable(exported)
    # The operations log travels as it was (the hide, the render's compaction), then the import's own.
    assert [e["kind"] for e in exported["operations"]] == ["context_created", "hidden", "compaction_applied"]
    assert entries(again)[:-1] == entries(exported)
    assert again["operations"][-1]["kind"] == "imported"
    assert again["operations"][-1]["details"] == {
        "from_conversation": "c1",
        "blocks": len(exported["blocks"]),
    }
    original = owner.post(
        f"{C}/c1/render/",
        {"format": "text", "debug": True, "include_sources": True, "now": "2030-01-01T00:00:00Z"},
    ).json()
    copy = owner.post(
        f"{C}/copy/render/",
        {"format": "text", "debug": True, "include_sources": True, "now": "2030-01-01T00:00:00Z"},
    ).json()
    assert copy["debug"] == original["debug"]
    assert owner.get(f"{C}/copy/").json()["started_at"] == owner.get(f"{C}/c1/").json()["started_at"]


def test_visible_window_export_keeps_only_the_post_summary_window(owner, conversation):
    conversation.settings = {"max_tokens": 5_000, "keep_recent_tokens": 1_500}
    conversation.save()
    add_turns(Timeline.objects.get(conversation=conversation), 8)
    owner.post(f"{C}/c1/render/", {})
    window = owner.get(f"{C}/c1/timeline/", window="visible").json()
    assert window["blocks"][0]["type"] == "conv.range.summary"
    assert len(window["blocks"]) < Block.objects.count()
    assert owner.post(f"{C}/import/", {**window, "id": "window"}).status_code == 201


def test_sources_merge_by_url_keeps_sids_and_range_paths_read_them(owner, conversation):
    first = owner.post(
        f"{C}/c1/sources/", {"sources": [{"url": "https://a"}, {"url": "https://b", "title": "B"}]}
    ).json()
    assert [(s["sid"], s["url"]) for s in first["sources_pool"]] == [(1, "https://a"), (2, "https://b")]
    merged = owner.post(
        f"{C}/c1/sources/", {"sources": [{"url": "https://c"}, {"url": "https://a", "title": "A!"}]}
    ).json()
    assert [(s["sid"], s["url"], s["title"]) for s in merged["sources_pool"]] == [
        (1, "https://a", "A!"),
        (2, "https://b", "B"),
        (3, "https://c", ""),
    ]
    read = owner.get(f"{C}/c1/blocks/", path="so:sources_pool[2-3]").json()
    assert [s["sid"] for s in read["sources_pool"]] == [2, 3]


def test_search_finds_compacted_and_hidden_blocks(owner, conversation):
    conversation.settings = {"max_tokens": 5_000, "keep_recent_tokens": 1_500}
    conversation.save()
    add_turns(Timeline.objects.get(conversation=conversation), 8)
    owner.post(f"{C}/c1/hide/", {"path": "tc:turn_8.tc_8x1.result", "replacement_text": "[gone]"})
    owner.post(f"{C}/c1/render/", {})
    hits = owner.get(f"{C}/c1/search/", q="word1_0_7").json()["results"]
    assert ("tc:turn_1.tc_1x0.result", True) in [(h["path"], h["compacted"]) for h in hits], hits
    hidden = owner.get(f"{C}/c1/search/", q="word8_1_3").json()["results"]
    assert hidden[0]["hidden"] is True and hidden[0]["compacted"] is False
    assert owner.get(f"{C}/c1/search/", q="").status_code == 400


def test_read_back_a_compacted_block_by_path(owner, conversation):
    conversation.settings = {"max_tokens": 5_000, "keep_recent_tokens": 1_500}
    conversation.save()
    add_turns(Timeline.objects.get(conversation=conversation), 8)
    owner.post(f"{C}/c1/render/", {})
    blocks = owner.get(f"{C}/c1/blocks/", path="tc:turn_1.tc_1x0.result").json()["blocks"]
    assert "word1_0_0" in blocks[0]["text"]
    assert owner.get(f"{C}/c1/blocks/", path="tc:turn_1.nothing").status_code == 404
    assert owner.get(f"{C}/c1/blocks/", include_hidden="1").status_code == 400  # only with path
