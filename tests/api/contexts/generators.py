"""Hypothesis strategies for valid OpenAI chat message lists (tool groups, unicode)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

# Any Unicode the databases can store: no NUL, no lone surrogates; a few fixed tricky samples.
_CHARS = st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",))
TEXT = st.one_of(
    st.text(_CHARS, max_size=30),
    st.sampled_from(
        ["", " leading and trailing ", "Wuppertal — Schwebebahn ß", "日本語 🙂", "\u202e rtl", "a\nb\tc"]
    ),
)
NON_EMPTY = st.text(_CHARS, min_size=1, max_size=20)

TEXT_PART = st.fixed_dictionaries({"type": st.just("text"), "text": TEXT})
IMAGE_PART = st.fixed_dictionaries(
    {
        "type": st.just("image_url"),
        "image_url": st.fixed_dictionaries(
            {"url": st.sampled_from(["https://example.com/cat.png", "data:image/png;base64,iVBORw0KGgo="])},
            optional={"detail": st.sampled_from(["auto", "low", "high"])},
        ),
    }
)
REFUSAL_PART = st.fixed_dictionaries({"type": st.just("refusal"), "refusal": TEXT})
TEXT_CONTENT = st.one_of(TEXT, st.lists(TEXT_PART, min_size=1, max_size=3))
USER_CONTENT = st.one_of(TEXT, st.lists(st.one_of(TEXT_PART, IMAGE_PART), min_size=1, max_size=3))

USER = st.fixed_dictionaries({"role": st.just("user"), "content": USER_CONTENT}, optional={"name": NON_EMPTY})
SYSTEM = st.fixed_dictionaries(
    {"role": st.just("system"), "content": TEXT_CONTENT}, optional={"name": NON_EMPTY}
)
ASSISTANT = st.one_of(
    st.fixed_dictionaries(
        {
            "role": st.just("assistant"),
            "content": st.one_of(TEXT, st.lists(st.one_of(TEXT_PART, REFUSAL_PART), min_size=1, max_size=2)),
        },
        optional={"name": NON_EMPTY},
    ),
    st.fixed_dictionaries({"role": st.just("assistant"), "content": st.none(), "refusal": TEXT}),
)


@st.composite
def tool_group(draw: Any) -> list[dict[str, Any]]:
    """An assistant message with tool calls, then one tool message per call."""
    ids = draw(st.lists(NON_EMPTY, min_size=1, max_size=3, unique=True))
    calls = [
        {
            "id": call_id,
            "type": "function",
            "function": {
                "name": draw(st.sampled_from(["calculator", "search", "get_weather"])),
                "arguments": draw(
                    st.sampled_from(
                        ["{}", '{"a": 2, "b": 2}', '{"q": "Wuppertal Schwebebahn — ß"}', "not json"]
                    )
                ),
            },
        }
        for call_id in ids
    ]
    assistant: dict[str, Any] = {"role": "assistant", "tool_calls": calls}
    content = draw(st.one_of(st.none(), TEXT))
    if content is not None or draw(st.booleans()):
        assistant["content"] = content
    results = []
    for call_id in draw(st.permutations(ids)):
        result: dict[str, Any] = {"role": "tool", "tool_call_id": call_id, "content": draw(TEXT_CONTENT)}
        if draw(st.booleans()):
            result["name"] = "calculator"
        results.append(result)
    return [assistant, *results]


@st.composite
def message_lists(draw: Any, min_groups: int = 1, max_groups: int = 6) -> list[dict[str, Any]]:
    groups = draw(
        st.lists(
            st.one_of(
                USER.map(lambda m: [m]), SYSTEM.map(lambda m: [m]), ASSISTANT.map(lambda m: [m]), tool_group()
            ),
            min_size=min_groups,
            max_size=max_groups,
        )
    )
    return [message for group in groups for message in group]
