"""render_window: parts, markers, tail, token accounting, the text debug view."""

from __future__ import annotations

from tests.builders import PDF_B64, PNG_B64, Stream
from timeline_app.domain.block_text import stable_json
from timeline_app.domain.blocks import PLAN, Block
from timeline_app.domain.settings import RenderSettings
from timeline_app.rendering.formats import Source
from timeline_app.rendering.pipeline import RenderOptions, render_window

SETTINGS = RenderSettings()
SOURCES = (Source(sid=1, url="https://a.example", title="A", text="alpha"),)
PLAN_BLOCK = Block(seq=99, type=PLAN, turn_id="t1", path="ar:t1.react.plan", text="1. search")


def _stream() -> Stream:
    s = Stream()
    s.turn("t0", calls=3)
    s.header("t1")
    s.prompt("t1")
    s.attachment("t1", "photo.png", "image/png", PNG_B64)
    s.attachment("t1", "menu.pdf", "application/pdf", PDF_B64)
    s.attachment("t1", "data.bin", "application/octet-stream", "AAAA")
    s.tool_round("t1", "tc_1")
    return s


def _render(fmt: str, **kw: object) -> object:
    options = RenderOptions(
        format=fmt,  # type: ignore[arg-type]
        include_sources=True,
        include_announce=True,
        announce=("budget: 2 calls",),
    )
    return render_window(
        _stream().blocks, settings=SETTINGS, options=options, sources=SOURCES, active_plan=PLAN_BLOCK
    )


def test_anthropic_parts_binary_and_markers() -> None:
    s = _stream()
    options = RenderOptions(format="anthropic", include_sources=True, include_announce=True, announce=("a",))
    rendered = render_window(s.blocks, settings=SETTINGS, options=options, sources=SOURCES)
    types = [p["type"] for p in rendered.blocks]
    assert types.count("image") == 1 and types.count("document") == 1
    # the octet-stream payload is not accepted by Anthropic: its placeholder is a text part
    assert any(
        p.get("text", "").startswith("<document media_type=application/octet-stream") for p in rendered.blocks
    )
    marked = [i for i, p in enumerate(rendered.blocks) if "cache_control" in p]
    assert marked == rendered.cache_points
    assert all(rendered.blocks[i]["cache_control"] == {"type": "ephemeral"} for i in marked)
    # 5 rounds (t0: three tool rounds, the first holding its header and prompt, and its
    # completion; t1: one): pre-tail on t0's first tool result, previous-turn on t0's completion
    assert rendered.marked_seqs == [s.blocks[4].seq, s.blocks[11].seq, s.blocks[-1].seq]
    # tail: sources then announce, never cached
    assert rendered.blocks[-2]["text"].startswith("[SOURCES POOL]")
    assert rendered.blocks[-1]["text"].startswith("[ANNOUNCE]")
    assert rendered.cache_points[-1] == len(rendered.blocks) - 3


def test_marker_of_a_binary_block_sits_on_its_binary_part() -> None:
    s = Stream()
    s.turn("t0")
    s.header("t1")
    s.prompt("t1")
    s.attachment("t1", "photo.png", "image/png", PNG_B64)
    rendered = render_window(s.blocks, settings=SETTINGS, options=RenderOptions())
    last = rendered.blocks[rendered.cache_points[-1]]
    assert last["type"] == "image" and last["cache_control"] == {"type": "ephemeral"}
    assert rendered.cache_points[-1] == len(rendered.blocks) - 1


def test_text_format_replaces_binary_with_placeholders_and_marks_debug() -> None:
    rendered = _render("text")
    assert all(p["type"] == "text" for p in rendered.blocks)  # type: ignore[attr-defined]
    debug = rendered.debug  # type: ignore[attr-defined]
    assert f"<image media_type=image/png b64_len={len(PNG_B64)}>" in debug
    assert f"<document media_type=application/pdf b64_len={len(PDF_B64)}>" in debug
    assert PNG_B64 not in debug
    assert "=>[4]" not in debug
    assert debug.index("=>[1]") < debug.index("=>[2]") < debug.index("[TURN t1]")
    assert debug.index("[TURN t1]") < debug.index("=>[3]") < debug.index("[SOURCES POOL]")
    assert '{"result": ["a", "b"]}\n=>[1]\n\n' in debug  # the marker line follows the cached part
    assert "[ACTIVE PLAN]\n[path: ar:t1.react.plan]\n1. search" in debug


def test_openai_messages_coalesce_and_carry_no_cache_control() -> None:
    rendered = _render("openai")
    messages = rendered.blocks  # type: ignore[attr-defined]
    assert rendered.cache_points == [] and rendered.debug is None  # type: ignore[attr-defined]
    assert len(messages) == 1 and messages[0]["role"] == "user"
    kinds = [p["type"] for p in messages[0]["content"]]
    assert kinds.count("image_url") == 1 and kinds.count("file") == 1
    assert "cache_control" not in stable_json(messages)
    assert messages[0]["content"][-1]["text"].startswith("[ANNOUNCE]")


def test_openai_stored_messages_render_verbatim() -> None:
    s = Stream()
    s.header("t0")
    system = {"role": "system", "content": "be brief"}
    assistant = {"role": "assistant", "content": "hi"}
    s.add("openai.message", "t0", text="be brief", meta={"openai_message": system})
    s.add("openai.message", "t0", text="hi", meta={"openai_message": assistant})
    s.prompt("t0")
    rendered = render_window(s.blocks, settings=SETTINGS, options=RenderOptions(format="openai"))
    assert rendered.blocks[1] == system and rendered.blocks[2] == assistant
    assert rendered.blocks[0]["role"] == "user" and rendered.blocks[3]["role"] == "user"
    assert rendered.blocks[1] is not system  # a copy, never the stored dict


def test_token_accounting_uses_effective_tokens_and_tail_text() -> None:
    s = Stream()
    s.turn("t0")
    s.blocks[1] = s.blocks[1].hide(replacement_text="x", reason="ttl", replacement_tokens=2)
    options = RenderOptions(format="anthropic", include_announce=True, announce=("hello there",))
    rendered = render_window(s.blocks, settings=SETTINGS, options=options, system_tokens=100, max_tokens=5000)
    assert rendered.tokens["visible"] == 10 + 2 + 10
    assert rendered.tokens["tail"] > 0
    assert rendered.tokens["total"] == 100 + rendered.tokens["visible"] + rendered.tokens["tail"]
    assert rendered.tokens["max_tokens"] == 5000
    assert (
        render_window(s.blocks, settings=SETTINGS, options=options).tokens["max_tokens"]
        == SETTINGS.max_tokens
    )


def test_tail_is_left_out_when_not_requested_or_empty() -> None:
    s = _stream()
    plain = render_window(s.blocks, settings=SETTINGS, options=RenderOptions(), sources=SOURCES)
    assert not any(p.get("text", "").startswith(("[SOURCES POOL]", "[ANNOUNCE]")) for p in plain.blocks)
    empty = render_window(
        s.blocks, settings=SETTINGS, options=RenderOptions(include_sources=True, include_announce=True)
    )
    assert empty.tokens["tail"] == 0
    assert empty.cache_points[-1] == len(empty.blocks) - 1


def test_hidden_binary_block_emits_no_payload() -> None:
    s = Stream()
    s.header("t0")
    s.attachment("t0", "photo.png", "image/png", PNG_B64)
    s.blocks[1] = s.blocks[1].hide(replacement_text="[pruned]", reason="ttl", replacement_tokens=2)
    for fmt in ("anthropic", "openai", "text"):
        rendered = render_window(s.blocks, settings=SETTINGS, options=RenderOptions(format=fmt))  # type: ignore[arg-type]
        assert PNG_B64 not in stable_json(rendered.blocks)
