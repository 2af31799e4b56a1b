"""The cue rules of the extractive summary (pure): which block writes which section, and which
sentence of a text is a standing instruction, a one-off request or a decision.

Each rule is one named predicate, listed in a tuple (:data:`BLOCK_KINDS`, :data:`STANDING_RULES`,
:data:`ONE_OFF_RULES`, :data:`DECISION_RULES`), as :mod:`compaction.summary.shapes` does for errors
and artifacts: a new case the benchmark misses is a predicate and its test, not a branch inside
``ExtractiveSummarizer.summarize``.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from compaction.summary import sections
from timeline_app.domain.blocks import ASSISTANT_COMPLETION, PLAN, USER_ATTACHMENT, USER_PROMPT, Block

# --------------------------------------------------------------------------------------------
# Blocks: which kind of line a block gives. Each predicate takes the block and its visible text;
# the first kind (in :data:`BLOCK_KINDS`) whose predicate holds is the block's.


def is_attachment(block: Block, text: str) -> bool:
    """A file, not a request: "Artifacts" names it, its text is read back by path."""
    return block.type == USER_ATTACHMENT


def is_users(block: Block) -> bool:
    """A user prompt or any block the user authored."""
    return block.type == USER_PROMPT or block.author == "user"


def is_acknowledging(block: Block, text: str) -> bool:
    """The user only saying "go on" ("ok", "Thanks, keep going."): no request, no instruction."""
    return is_users(block) and is_acknowledgement(text)


def is_request(block: Block, text: str) -> bool:
    """Anything else the user says: a request (and, in a prompt, maybe standing instructions)."""
    return is_users(block)


def is_completion(block: Block, text: str) -> bool:
    """The assistant's text: its decisions, else what it did."""
    return block.type == ASSISTANT_COMPLETION and bool(text.strip())


def is_plan(block: Block, text: str) -> bool:
    """A plan: its pending steps are the next steps."""
    return block.type == PLAN


BlockRule = Callable[[Block, str], bool]
#: The kinds of block, in the order they are tried (a user's attachment is no request, an
#: acknowledgement is none either).
BLOCK_KINDS: tuple[tuple[str, BlockRule], ...] = (
    ("attachment", is_attachment),
    ("acknowledgement", is_acknowledging),
    ("request", is_request),
    ("completion", is_completion),
    ("plan", is_plan),
)


def block_kind(block: Block, text: str) -> str | None:
    """The first kind of :data:`BLOCK_KINDS` that takes ``block`` (None: it writes no such line)."""
    return next((name for name, rule in BLOCK_KINDS if rule(block, text)), None)


# --------------------------------------------------------------------------------------------
# Requests: a goal line ("- [turn] text") and what it carries.

LABEL = re.compile(r"^- \[[^\]]*\] ")
MIN_REQUEST_WORDS = 4  # "ok", "Go on.": a follow-up without an identifier is not a request
# How a user says "continue" without asking for anything new: every word one of these.
_ACK_WORDS = frozenset(
    re.findall(
        r"\w+",
        "ok okay yes yep sure thanks thank you fine great good perfect looks sounds go on ahead continue "
        "carry proceed keep going with the next step steps plan please by me that is all right alright "
        "thx ty pls k lgtm do it",
    )
)


def prompt_text(text: str) -> str:
    """A goal line's text without its bullet and turn label."""
    return LABEL.sub("", text, count=1).removeprefix("- ").strip()


def is_acknowledgement(text: str) -> bool:
    """A prompt that only says "go on" ("ok", "Looks good, proceed with the next step."): every
    word is one of acknowledgement and continuation; it carries no request to keep."""
    words = re.findall(r"[^\W\d_]+|\S", prompt_text(text).lower())
    return bool(words) and all(w in _ACK_WORDS or not w.isalpha() for w in words)


def is_follow_up(goal_line: str) -> bool:
    """A short prompt without an identifier ("ok", "Go on."): it carries no request of its own."""
    text = prompt_text(goal_line)
    return len(text.split()) < MIN_REQUEST_WORDS and not sections.identifiers_in(text)


# --------------------------------------------------------------------------------------------
# Sentences: each rule takes a sentence and its position in the text (0: the request).

# Words that make a user's sentence a standing instruction or limit rather than a one-off request.
_CONSTRAINT_CUES = re.compile(
    r"\b(always|never|every|only|must|do not|don't|no|keep|budget|avoid|need|prefer|make sure|"
    r"exclude|ignore|at most|at least|instead)\b",
    re.IGNORECASE,
)
# The cues of a rule for the rest of the session, not of a one-off request ("Rebook PNR0J5MO and
# keep LX5479 as it is."): see :func:`is_standing_rule`.
_RULE_CUES = re.compile(r"\b(always|never|must|do not|don't)\b", re.IGNORECASE)
# A sentence giving a reason, or the assistant saying what it chose or did.
_REASON_CUES = re.compile(r"\b(because|since|so that|due to|given that)\b|\s[—–]\s", re.IGNORECASE)
_MIN_INSTRUCTION_WORDS = 3  # a cue-less sentence after the request: "Thanks." is not an instruction
# The assistant saying what it did: "I" or "We", then a verb in the past tense ("I pinned …",
# "We kept …"); "I have the data I need …" says no choice.
_FIRST_PERSON_PAST = re.compile(
    r"^(?:I|We)\s+(?:\w+ly\s+)?(?:\w{2,}ed|chose|kept|left|sent|held|split|set|went|took|made|put|cut|froze|"
    r"built|wrote|ran|gave|found|got|bought|spent|brought|chose|let)\b"
)


def has_constraint_cue(sentence: str, position: int = 0) -> bool:
    """A word that marks a standing instruction or limit: always, never, only, must, budget…"""
    return _CONSTRAINT_CUES.search(sentence) is not None


def is_cue_less_instruction(sentence: str, position: int) -> bool:
    """A sentence that follows the prompt's request (its first sentence) without naming a
    particular thing (no identifier) and without asking: "Summarise X. Use the fiscal year
    starting in July." — a way of working, not a one-off request."""
    return (
        position > 0
        and not sentence.rstrip().endswith("?")
        and len(sentence.split()) >= _MIN_INSTRUCTION_WORDS
        and not sections.identifiers_in(sentence)
    )


def is_standing_rule(text: str) -> bool:
    """A constraint line that names an identifier with a cue that binds the rest of the session
    ("Never touch prod-db-01.", "Always copy ops@example.com."); one without such a cue ("Rebook
    PNR0J5MO … and keep LX5479 as it is.") is about one thing at one time: working state."""
    return _RULE_CUES.search(text) is not None


def is_request_about_a_thing(sentence: str, position: int) -> bool:
    """The prompt's request naming a particular thing without a rule's cue ("Rebook PNR0J5MO …
    and keep LX5479 as it is."): about one thing at one time, kept among the requests, not a
    standing instruction whatever cue word it has. After the request, a sentence naming one is a
    rule ("Keep everything in eu-west-1 for data residency.")."""
    return position == 0 and bool(sections.identifiers_in(sentence)) and not is_standing_rule(sentence)


def is_clear_constraint(text: str) -> bool:
    """A constraint line with a word that marks a standing instruction or limit (always, never,
    only…) and no identifier. Those that name one ("Rebook PNR0J5MO and keep LX5479 as it is.") are
    as likely a one-off request as the cue-less ones."""
    return has_constraint_cue(text) and not sections.identifiers_in(text)


def gives_a_reason(sentence: str, position: int = 0) -> bool:
    """A sentence giving a reason: because, since, so that, due to, given that, a dash."""
    return _REASON_CUES.search(sentence) is not None


def says_what_it_did(sentence: str, position: int = 0) -> bool:
    """The assistant saying what it chose or did, in the past tense ("I pinned the library to
    2.1."; "I have the data I need." is progress, not a decision)."""
    return _FIRST_PERSON_PAST.match(sentence) is not None


SentenceRule = Callable[[str, int], bool]
#: A user's sentence that is a standing instruction or limit…
STANDING_RULES: tuple[SentenceRule, ...] = (has_constraint_cue, is_cue_less_instruction)
#: …unless it is a one-off request.
ONE_OFF_RULES: tuple[SentenceRule, ...] = (is_request_about_a_thing,)
#: An assistant's sentence that is a decision.
DECISION_RULES: tuple[SentenceRule, ...] = (gives_a_reason, says_what_it_did)


def is_constraint_sentence(sentence: str, position: int) -> bool:
    """A user's sentence that one of :data:`STANDING_RULES` takes and none of
    :data:`ONE_OFF_RULES`."""
    return any(rule(sentence, position) for rule in STANDING_RULES) and not any(
        rule(sentence, position) for rule in ONE_OFF_RULES
    )


def is_decision_sentence(sentence: str, position: int) -> bool:
    """An assistant's sentence that one of :data:`DECISION_RULES` takes."""
    return any(rule(sentence, position) for rule in DECISION_RULES)
