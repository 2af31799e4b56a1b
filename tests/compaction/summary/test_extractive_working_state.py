"""The working state an agent needs after a compaction (issue 24), kept by the extractive summary:
standing instructions verbatim, the active plan's pending steps, each file with its last action,
decisions with their reason, and the latest request even after a run of short follow-ups."""

from __future__ import annotations

import json

from compaction.summary import ExtractiveSummarizer
from compaction.summary.sections import parse_sections
from timeline_app.domain.blocks import Block


def _blocks() -> list[Block]:
    plan = {"steps": [{"text": "Verify the payment", "status": "done"}, {"text": "Email the customer"}]}
    later = {"steps": [{"text": "Email the customer", "status": "done"}, {"text": "Close ticket SUP-1234"}]}
    rows: list[dict[str, object]] = [
        {
            "type": "user.prompt",
            "author": "user",
            "text": "Refund order ORD-555123. Always answer in German.",
        },
        {"type": "react.plan", "path": "ar:t1.react.plan", "text": json.dumps(plan)},
        {
            "type": "react.tool.call",
            "path": "tc:t1.tc_1.call",
            "meta": {"tool_id": "fs.read", "tool_call_id": "tc_1"},
            "text": json.dumps({"tool_id": "fs.read", "params": {"path": "cases/case_1.pdf"}}),
        },
        {
            "type": "react.tool.call",
            "path": "tc:t1.tc_2.call",
            "meta": {"tool_id": "crm.export_case", "tool_call_id": "tc_2"},
            "text": json.dumps({"params": {"target": "cases/case_1.pdf", "format": "pdf"}}),
        },
        {
            "type": "assistant.completion",
            "author": "assistant",
            "text": "Done; the results are above. I issued a store credit because the parcel was late.",
        },
        {"type": "user.prompt", "author": "user", "text": "ok"},
        {"type": "user.prompt", "author": "user", "text": "Go on."},
        {"type": "user.prompt", "author": "user", "text": "Thanks."},
        {"type": "react.plan", "path": "ar:t4.react.plan", "text": json.dumps(later)},
    ]
    return [Block(seq=i + 1, turn_id=f"t{i // 3 + 1}", **row) for i, row in enumerate(rows)]  # type: ignore[arg-type]


def test_the_working_state_sections_exact() -> None:
    text = ExtractiveSummarizer().summarize(blocks=_blocks(), previous_summary=None, max_tokens=800)
    lines = parse_sections(text)
    assert lines["constraints"] == ["- Always answer in German."]
    assert lines["next_steps"] == ["- plan `ar:t4.react.plan`, pending:", "- [ ] Close ticket SUP-1234"]
    assert lines["artifacts"] == ["- `cases/case_1.pdf` — exported, crm.export_case (tc:t1.tc_2.call)"]
    assert lines["decisions"] == ["- [t2] I issued a store credit because the parcel was late."]
    assert lines["progress"] == []


def test_follow_ups_do_not_push_the_latest_request_out_under_pressure() -> None:
    blocks = _blocks()
    requests = [
        Block(
            seq=100 + k,
            type="user.prompt",
            author="user",
            turn_id=f"r{k}",
            text=f"Please check invoice INV-{k:04d} twice.",
        )
        for k in range(6)
    ]
    text = ExtractiveSummarizer().summarize(
        blocks=[*requests, *blocks[1:]], previous_summary=None, max_tokens=120
    )
    assert "- [r5] Please check invoice INV-0005 twice." in text
    assert "- Always answer in German." not in text  # said in no prompt of this range
    assert "- [t2] ok" not in text  # a follow-up is dropped before the latest requests


def test_constraints_survive_the_next_summary_verbatim() -> None:
    first = ExtractiveSummarizer().summarize(blocks=_blocks(), previous_summary=None, max_tokens=800)
    filler = [
        Block(
            seq=200 + k, type="react.tool.result", turn_id="t9", path=f"tc:t9.tc_{k}.result", text="x " * 300
        )
        for k in range(20)
    ]
    second = ExtractiveSummarizer().summarize(blocks=filler, previous_summary=first, max_tokens=150)
    assert "- Always answer in German." in second
    assert "- [ ] Close ticket SUP-1234" in second


# ---------------------------------------------------------------------------------------------
# What `bench quality` showed missing (issue 24): each test fails with its fix taken out.


def _summary(rows: list[dict[str, object]], max_tokens: int = 800) -> dict[str, list[str]]:
    blocks = [Block(seq=i + 1, turn_id=f"t{i + 1}", **row) for i, row in enumerate(rows)]  # type: ignore[arg-type]
    return parse_sections(
        ExtractiveSummarizer().summarize(blocks=blocks, previous_summary=None, max_tokens=max_tokens)
    )


def test_a_cue_less_instruction_after_the_request_is_a_constraint_verbatim() -> None:
    lines = _summary(
        [
            {
                "type": "user.prompt",
                "author": "user",
                "text": "Compute churn from ds_churn_2025q1. Use the fiscal year starting in July. "
                "Compare it with ds_churn_2024q1. Why is it so high?",
            },
            {"type": "user.prompt", "author": "user", "text": "Use the numbers from last week, please."},
        ]
    )
    # Not the request (the first sentence), nor a sentence naming an identifier, nor a question, nor a
    # prompt's first sentence without a cue.
    assert lines["constraints"] == ["- Use the fiscal year starting in July."]


def test_an_attachment_is_an_artifact_not_a_request_and_its_numbers_rank_after_stated_ones() -> None:
    table = "id,region,value\n" + "\n".join(f"{k},EMEA,{70000 + k}" for k in range(40))
    lines = _summary(
        [
            {"type": "user.prompt", "author": "user", "text": "Plot the revenue from ds_revenue_2025q1."},
            {"type": "assistant.completion", "author": "assistant", "text": "Noted JOB-12345 for later."},
            {
                "type": "user.attachment",
                "author": "user",
                "path": "fi:t3.user.attachments/sample_1.csv",
                "mime": "text/csv",
                "text": table,
            },
        ]
    )
    assert lines["goals"] == ["- [t1] Plot the revenue from ds_revenue_2025q1."]
    assert lines["artifacts"] == ["- `fi:t3.user.attachments/sample_1.csv` — attached"]
    # The table's numbers are listed after what the conversation states, though newer.
    assert lines["identifiers"][0] == "- JOB-12345"


def test_a_file_under_a_path_parameter_is_an_artifact_whatever_its_extension() -> None:
    lines = _summary(
        [
            {
                "type": "react.tool.call",
                "path": "tc:t1.tc_1.call",
                "meta": {"tool_id": "fs.write", "tool_call_id": "tc_1"},
                "text": json.dumps({"params": {"path": "models/churn_v2.ckpt", "mode": "w"}}),
            }
        ]
    )
    assert lines["artifacts"] == ["- `models/churn_v2.ckpt` — written, fs.write (tc:t1.tc_1.call)"]


def test_acknowledgements_are_not_requests_and_questions_do_not_push_the_request_out() -> None:
    rows: list[dict[str, object]] = [
        {"type": "user.prompt", "author": "user", "text": "Refund order ORD-100001 and close SUP-2001."},
        {"type": "user.prompt", "author": "user", "text": "Find three replications of PMID12345678 soon."},
        *(
            {"type": "user.prompt", "author": "user", "text": text}
            for text in (
                "Looks good, proceed with the next step.",
                "What was the status of ORD-100002 again?",
                "Sounds good, go ahead with the plan.",
                "Quick one: is ORD-100003 still open?",
                "Also double-check ORD-100004.",
                "Thanks, keep going.",
            )
        ),
    ]
    assert _summary(rows)["constraints"] == []  # "keep going" is no standing instruction
    assert _summary(rows)["goals"] == [  # acknowledgements carry no request
        "- [t1] Refund order ORD-100001 and close SUP-2001.",
        "- [t2] Find three replications of PMID12345678 soon.",
        "- [t4] What was the status of ORD-100002 again?",
        "- [t6] Quick one: is ORD-100003 still open?",
        "- [t7] Also double-check ORD-100004.",
    ]
    rows += [
        {"type": "assistant.completion", "author": "assistant", "text": f"Noted JOB-{k:05d}."}
        for k in range(60)
    ]
    assert "- [t2] Find three replications of PMID12345678 soon." in _summary(rows, max_tokens=140)["goals"]


def test_cue_less_instructions_beyond_a_fifth_of_the_budget_go_first() -> None:
    rows: list[dict[str, object]] = [
        {
            "type": "user.prompt",
            "author": "user",
            "text": "Fix the parser. Use the fiscal year starting in July.",
        },
        {
            "type": "react.tool.call",
            "path": "tc:t2.tc_1.call",
            "meta": {"tool_id": "fs.write", "tool_call_id": "tc_1"},
            "text": json.dumps({"params": {"path": "src/parser/main.py"}}),
        },
        *(
            {
                "type": "user.prompt",
                "author": "user",
                "text": f"Look at step {k} of the parser again. Then run the whole test suite once more, step {k}.",
            }
            for k in range(40)
        ),
    ]
    lines = _summary(rows, max_tokens=400)
    assert lines["constraints"][0] == "- Use the fiscal year starting in July."  # the oldest stays
    assert sum(len(line) // 4 + 2 for line in lines["constraints"]) <= 400 * 0.2 + 30
    assert lines["artifacts"] == ["- `src/parser/main.py` — written, fs.write (tc:t2.tc_1.call)"]


def test_an_acknowledgement_run_into_an_instruction_is_split_off() -> None:
    lines = _summary(
        [{"type": "user.prompt", "author": "user", "text": "ok Use the fiscal year starting in July."}]
    )
    assert lines["constraints"] == ["- Use the fiscal year starting in July."]


def test_requests_with_a_cue_word_and_an_identifier_do_not_fill_the_constraints() -> None:
    rows: list[dict[str, object]] = [
        {"type": "user.prompt", "author": "user", "text": "Book a flight. No flights departing before 8am."},
        *(
            {
                "type": "user.prompt",
                "author": "user",
                "text": f"Rebook PNR{k:05d} to a later departure to Oslo and keep LX{1000 + k} as it is.",
            }
            for k in range(30)
        ),
        {
            "type": "user.attachment",
            "author": "user",
            "path": "fi:t99.user.attachments/visa_letter_1.txt",
            "text": "letter",
        },
    ]
    lines = _summary(rows, max_tokens=400)
    assert lines["constraints"][0] == "- No flights departing before 8am."
    assert len(lines["constraints"]) < 10
    assert lines["artifacts"] == ["- `fi:t99.user.attachments/visa_letter_1.txt` — attached"]


def test_requests_naming_an_identifier_age_out_with_the_working_state_but_rules_stay() -> None:
    """Bench quality, travel session 12: six old "Rebook X … and keep Y as it is." requests held
    the constraints' fifth of the budget and pushed out the newest file. A constraint that names an
    identifier without a rule's cue (always, never, must, do not) is working state: it ages out
    before newer files; one with such a cue ("Never cancel booking PNRKEEP1.") stays."""
    rows: list[dict[str, object]] = [
        {
            "type": "user.prompt",
            "author": "user",
            "text": "Plan a trip to Oslo. Never cancel booking PNRKEEP1. I only fly with Star Alliance carriers.",
        },
        *(
            {
                "type": "user.prompt",
                "author": "user",
                "text": f"Rebook PNR{k:05d} to a later departure to Oslo and keep LX{1000 + k} as it is.",
            }
            for k in range(8)
        ),
        *(
            {
                "type": "assistant.completion",
                "author": "assistant",
                "text": f"I chose hotel HTL-{k:05d} because it is close to the venue.",
            }
            for k in range(8)
        ),
        {
            "type": "react.tool.call",
            "path": "tc:t18.tc_1.call",
            "meta": {"tool_id": "pdf.download", "tool_call_id": "tc_1"},
            "text": json.dumps({"params": {"path": "trips/boarding_pass_DXMMU0.pdf"}}),
        },
    ]
    lines = _summary(rows, max_tokens=300)
    assert lines["artifacts"] == [
        "- `trips/boarding_pass_DXMMU0.pdf` — downloaded, pdf.download (tc:t18.tc_1.call)"
    ]
    assert lines["constraints"] == [
        "- Never cancel booking PNRKEEP1.",
        "- I only fly with Star Alliance carriers.",
    ]
    assert "- [t9] Rebook PNR00007 to a later departure to Oslo and keep LX1007 as it is." in lines["goals"]
