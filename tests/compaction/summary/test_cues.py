"""The extractive summary's cue rules (``compaction.summary.cues``): one sample per sentence rule
that only that rule of its list takes, and each kind of block with the line it gives."""

from __future__ import annotations

import pytest

from compaction.summary import cues
from timeline_app.domain.blocks import (
    ASSISTANT_COMPLETION,
    PLAN,
    TOOL_RESULT,
    USER_ATTACHMENT,
    USER_PROMPT,
    Block,
)

SENTENCE_SAMPLES = [
    (cues.STANDING_RULES, cues.has_constraint_cue, "Never touch prod.", 0),
    (cues.STANDING_RULES, cues.is_cue_less_instruction, "Use the fiscal year starting in July.", 1),
    (
        cues.ONE_OFF_RULES,
        cues.is_request_about_a_thing,
        "Rebook PNR0J5MO to Oslo and keep LX5479 as it is.",
        0,
    ),
    (cues.DECISION_RULES, cues.gives_a_reason, "It stopped because the disk was full.", 0),
    (cues.DECISION_RULES, cues.says_what_it_did, "I pinned the library to 2.1.", 0),
]


@pytest.mark.parametrize(("rules", "rule", "sentence", "position"), SENTENCE_SAMPLES)
def test_each_sentence_rule_takes_a_sentence_no_other_rule_of_its_list_takes(  # type: ignore[no-untyped-def]
    rules, rule, sentence: str, position: int
) -> None:
    assert rule in rules
    assert [r.__name__ for r in rules if r(sentence, position)] == [rule.__name__]


def test_a_standing_sentence_is_a_constraint_unless_a_one_off_rule_takes_it() -> None:
    assert cues.is_constraint_sentence("Never touch prod.", 0)
    assert cues.is_constraint_sentence("Use the fiscal year starting in July.", 1)
    assert not cues.is_constraint_sentence("Use the fiscal year starting in July.", 0)  # the request
    assert not cues.is_constraint_sentence("Rebook PNR0J5MO to Oslo and keep LX5479 as it is.", 0)
    assert cues.is_constraint_sentence("Never rebook PNR0J5MO.", 0)  # a rule's cue binds the session
    assert cues.is_decision_sentence("I pinned the library to 2.1.", 0)
    assert not cues.is_decision_sentence("I have the data I need.", 0)


@pytest.mark.parametrize(
    ("block", "kind"),
    [
        (Block(seq=1, type=USER_ATTACHMENT, author="user", text="a,b\n1,2"), "attachment"),
        (Block(seq=1, type=USER_PROMPT, author="user", text="ok, go on"), "acknowledgement"),
        (Block(seq=1, type=USER_PROMPT, author="user", text="Refund order 1234."), "request"),
        (Block(seq=1, type="custom.note", author="user", text="Ship it on Monday."), "request"),
        (Block(seq=1, type=ASSISTANT_COMPLETION, author="assistant", text="Done."), "completion"),
        (Block(seq=1, type=ASSISTANT_COMPLETION, author="assistant", text="  "), None),
        (Block(seq=1, type=PLAN, author="assistant", text='{"steps": []}'), "plan"),
        (Block(seq=1, type=TOOL_RESULT, author="tool", text="ok"), None),
    ],
)
def test_a_block_takes_the_first_kind_whose_rule_holds(block: Block, kind: str | None) -> None:
    assert cues.block_kind(block, block.text) == kind
