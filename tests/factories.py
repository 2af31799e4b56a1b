"""Database builders for tests: factory_boy factories and one ``add_turn``, all writing through the
services (the path the API takes), so a test's rows are rows the service could have written.

* ``TenantFactory``, ``ConversationFactory`` (``conversation_create``: settings validated, the main
  context created) and ``TimelineFactory`` (a new conversation's main context:
  ``TimelineFactory(conversation__settings=SMALL)``).
* ``add_turn`` / ``add_turns``: a turn through ``turn_start`` then ``blocks_append`` (one append
  per tool round, one for the answer), as an agent sends it.
* ``fill_to``: turns until the visible window passes a token count.

The pure core's tests build block values with ``tests/builders.py`` instead.
"""

from __future__ import annotations

from typing import Any

import factory
from factory.django import DjangoModelFactory

from timeline_app import selectors
from timeline_app.domain import blocks as b
from timeline_app.domain.contributions import NewBlock, tool_call_blocks
from timeline_app.models import Conversation, Tenant, Timeline
from timeline_app.services.blocks import blocks_append, turn_start
from timeline_app.services.conversations import conversation_create

# max_tokens 5,000: the render compacts above 4,500 (threshold 0.9), the sweep above 3,750 (0.75).
SMALL = {"max_tokens": 5_000, "keep_recent_tokens": 1_500}


class TenantFactory(DjangoModelFactory):
    class Meta:
        model = Tenant
        django_get_or_create = ("name",)

    name = factory.Sequence(lambda n: f"tenant-{n}")


class ConversationFactory(DjangoModelFactory):
    """A conversation created by ``conversation_create`` (a random public id unless given)."""

    class Meta:
        model = Conversation

    tenant = factory.SubFactory(TenantFactory)
    public_id = None
    title = ""
    settings = None

    @classmethod
    def _create(cls, model_class: type[Conversation], *args: Any, **kwargs: Any) -> Conversation:
        return conversation_create(**kwargs)


class TimelineFactory(DjangoModelFactory):
    """The main context of a new conversation (the one ``conversation_create`` makes)."""

    class Meta:
        model = Timeline

    conversation = factory.SubFactory(ConversationFactory)

    @classmethod
    def _create(
        cls, model_class: type[Timeline], *args: Any, conversation: Conversation, **kwargs: Any
    ) -> Timeline:
        return Timeline.objects.get(conversation=conversation, name=Timeline.DEFAULT_NAME)


def add_turn(
    timeline: Timeline,
    number: int,
    *,
    turn_id: str | None = None,
    prompt: str | None = None,
    tool_calls: int = 2,
    result_words: int = 200,
    result: str | None = None,
    note: str | None = None,
    answer: str | None = None,
    complete: bool = True,
) -> str:
    """Turn ``turn_{number}`` (or ``turn_id``): the prompt, ``tool_calls`` tool rounds (a note, the
    call ``tc_{stem}x{call}``, a JSON result of ``result_words`` words, or the text ``result`` as
    markdown), then the answer unless ``complete`` is false. Returns the turn id."""
    turn_id = turn_id or f"turn_{number}"
    stem = turn_id.removeprefix("turn_")
    turn_start(timeline=timeline, turn_id=turn_id, prompt=prompt or f"Question {number}: find things.")
    for call in range(tool_calls):
        blocks_append(
            timeline=timeline,
            blocks=tool_call_blocks(
                turn_id=turn_id,
                tool_call_id=f"tc_{stem}x{call}",
                tool_id="web_tools.web_search",
                params={"q": f"query {number}.{call}"},
                result=(
                    result
                    if result is not None
                    else {"result": " ".join(f"word{number}_{call}_{i}" for i in range(result_words))}
                ),
                note=note if note is not None else f"searching {call}",
                result_mime="application/json" if result is None else "text/markdown",
            ),
        )
    if complete:
        blocks_append(
            timeline=timeline,
            blocks=[
                NewBlock(
                    type=b.ASSISTANT_COMPLETION,
                    author="assistant",
                    turn_id=turn_id,
                    text=answer or f"Answer {number}.",
                )
            ],
        )
    return turn_id


def add_turns(timeline: Timeline, count: int, **kwargs: Any) -> list[str]:
    """Turns 1 to ``count`` (``add_turn``'s keywords apply to each)."""
    return [add_turn(timeline, number, **kwargs) for number in range(1, count + 1)]


def fill_to(timeline: Timeline, low: int, high: int | None = None, **kwargs: Any) -> int:
    """Add turns until the visible tokens pass ``low``, and check they stay under ``high``.
    Returns the visible tokens. Turns of 16-word tool results (about 300 tokens) unless
    ``kwargs`` say otherwise: small steps, so a window of a few hundred tokens is hit."""
    kwargs.setdefault("result_words", 16)
    number = 1 + sum(1 for blk in selectors.visible_window(timeline=timeline) if blk.type == b.TURN_HEADER)
    visible = selectors.timeline_visible_tokens(timeline=timeline)
    while visible <= low:
        add_turn(timeline, number, **kwargs)
        number += 1
        visible = selectors.timeline_visible_tokens(timeline=timeline)
    if high is not None:
        assert visible < high, f"overshot: {visible} tokens (wanted {low}..{high})"
    return visible
