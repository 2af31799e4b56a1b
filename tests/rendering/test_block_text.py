"""Each block type's rendered text (seed 000 "Visible Timeline")."""

from __future__ import annotations

from tests.builders import PDF_B64, PNG_B64, Stream
from timeline_app.domain.block_text import binary_placeholder, block_text
from timeline_app.domain.blocks import PLAN, PLAN_ACK, TOOL_RESULT, Block
from timeline_app.rendering.formats import Source, announce_text, block_parts, sources_pool_text

T = "turn_1770603271112_2yz1lp"


def test_turn_header_renders_turn_id_and_timestamp() -> None:
    s = Stream()
    assert block_text(s.header(T)) == f"[TURN {T}] ts=2026-02-09T02:14:32.676425Z"


def test_user_prompt_renders_user_message_path_and_text() -> None:
    s = Stream()
    text = block_text(s.prompt(T, "Could you find top 3 places to eat here in Wuppertal?"))
    assert text == (
        f"[USER MESSAGE]\n[path: ar:{T}.user.prompt]\nCould you find top 3 places to eat here in Wuppertal?"
    )


def test_user_attachment_renders_name_mime_summary_and_paths() -> None:
    s = Stream()
    block = s.attachment(
        T,
        "menu.pdf",
        "application/pdf",
        meta={"summary": "2-page menu", "physical_path": f"{T}/attachments/menu.pdf"},
    )
    assert block_text(block) == (
        "[USER ATTACHMENT] menu.pdf | application/pdf\n"
        "summary: 2-page menu\n"
        f"[path: fi:{T}.user.attachments/menu.pdf]\n"
        f"[physical_path: {T}/attachments/menu.pdf]"
    )


def test_attachment_name_prefers_meta_name() -> None:
    s = Stream()
    block = s.attachment(T, "x.txt", "text/plain", meta={"name": "notes.txt"}, text="body")
    assert block_text(block).splitlines()[0] == "[USER ATTACHMENT] notes.txt | text/plain"
    assert block_text(block).endswith("\nbody")


def test_notes_and_completion_render_as_agent_say_with_path_after_header() -> None:
    s = Stream()
    notes = s.tool_round(T, "tc_1")[0]
    assert block_text(notes) == f"[AI Agent say]:\n[path: ar:{T}.react.notes.tc_1]\nthinking"
    assert block_text(s.completion(T, "Here you go")) == (
        f"[AI Agent say]:\n[path: ar:{T}.assistant.completion]\nHere you go"
    )


def test_tool_call_and_results_render_json_or_artifact_labels() -> None:
    s = Stream()
    _, call, result = s.tool_round(T, "tc_1")
    assert block_text(call).startswith(f"[react.tool.call] (JSON)\n[path: tc:{T}.tc_1.call]\n{{")
    assert block_text(result).startswith(f"[react.tool.result] (JSON status)\n[path: tc:{T}.tc_1.result]\n")
    artifact = Block(
        seq=9, type=TOOL_RESULT, turn_id=T, mime="text/markdown", path="so:sources_pool[1-5]", text="x"
    )
    assert block_text(artifact) == "[react.tool.result] (artifact block)\n[path: so:sources_pool[1-5]]\nx"


def test_summary_renders_covered_turns_and_split_turn() -> None:
    s = Stream()
    plain = s.summary("turn_c", ["turn_a", "turn_b"])
    assert block_text(plain) == (
        "[CONVERSATION SUMMARY] covered_turns=turn_a,turn_b\n[path: su:turn_c.conv.range.summary]\nsummary text"
    )
    split = s.summary("turn_c", ["turn_a", "turn_b", "turn_c"], meta={"split_turn_id": "turn_c"})
    assert block_text(split).splitlines()[0] == (
        "[CONVERSATION SUMMARY] covered_turns=turn_a,turn_b,turn_c split_turn=turn_c"
    )


def test_plan_ack_and_unknown_types() -> None:
    plan = Block(seq=1, type=PLAN, turn_id=T, path=f"ar:{T}.react.plan", text='{"steps": []}')
    assert block_text(plan) == f'[react.plan] (JSON)\n[path: ar:{T}.react.plan]\n{{"steps": []}}'
    ack = Block(seq=2, type=PLAN_ACK, turn_id=T, text="step 1 done")
    assert block_text(ack) == "[react.plan.ack]\nstep 1 done"
    other = Block(seq=3, type="stage.gate", turn_id=T, author="gate", path=f"ar:{T}.stage.gate", text="ok")
    assert block_text(other) == f"[stage.gate] author=gate\n[path: ar:{T}.stage.gate]\nok"
    anonymous = Block(seq=4, type="stage.misc", text="ok")
    assert block_text(anonymous) == "[stage.misc]\nok"


def test_binary_image_gives_text_part_then_image_part() -> None:
    s = Stream()
    block = s.attachment(T, "photo.png", "image/png", PNG_B64)
    parts = block_parts(block)
    assert [p.kind for p in parts] == ["text", "image"]
    assert parts[1].data == PNG_B64
    assert binary_placeholder(block) == f"<image media_type=image/png b64_len={len(PNG_B64)}>"


def test_binary_pdf_gives_text_part_then_document_part() -> None:
    s = Stream()
    block = s.attachment(T, "menu.pdf", "application/pdf", PDF_B64)
    parts = block_parts(block)
    assert [p.kind for p in parts] == ["text", "document"]
    assert parts[1].placeholder == f"<document media_type=application/pdf b64_len={len(PDF_B64)}>"
    assert parts[1].filename == "menu.pdf"


def test_hidden_block_renders_replacement_and_no_binary() -> None:
    s = Stream()
    block = s.attachment(T, "photo.png", "image/png", PNG_B64).hide(
        replacement_text="[pruned] photo", reason="ttl", replacement_tokens=3
    )
    parts = block_parts(block)
    assert len(parts) == 1
    assert (
        parts[0].text
        == f"[user.attachment] (hidden)\n[path: fi:{T}.user.attachments/photo.png]\n[pruned] photo"
    )
    assert PNG_B64 not in parts[0].text


def test_sources_pool_text_lists_sources_by_sid_with_trimmed_text() -> None:
    sources = [
        Source(sid=2, url="https://b.example", title="B", text="y" * 2000),
        Source(sid=1, url="https://a.example", title="A", text="alpha"),
    ]
    text = sources_pool_text(sources)
    lines = text.splitlines()
    assert lines[:4] == [
        "[SOURCES POOL]",
        "[path: so:sources_pool[1-2]]",
        "[1] A — https://a.example",
        "alpha",
    ]
    assert lines[4] == "[2] B — https://b.example"
    assert len(lines[5]) <= 600
    assert sources_pool_text([]) == ""


def test_announce_text_with_active_plan() -> None:
    plan = Block(seq=5, type=PLAN, turn_id=T, path=f"ar:{T}.react.plan", text="1. search")
    assert announce_text(["budget: 3 calls left"], plan) == (
        f"[ANNOUNCE]\nbudget: 3 calls left\n[ACTIVE PLAN]\n[path: ar:{T}.react.plan]\n1. search"
    )
    assert announce_text(["note"]) == "[ANNOUNCE]\nnote"
    assert announce_text([]) == ""
