"""The 64-character limit on provider tool names, at its boundary (docs/native-formats.md): a name
of exactly 64 characters (as mapped) is kept as it is; 65 is shortened to the 50-character head,
``-h`` and 12 hex digits, and reverses against the declared names. The Python client maps the
same way (tests/client/test_tool_names.py)."""

from __future__ import annotations

import pytest
from timeline_client import tool_names as client

from timeline_app.rendering.native import tool_names as core

MAPPINGS = [core, client]


@pytest.mark.parametrize("names", MAPPINGS, ids=["render", "client"])
@pytest.mark.parametrize(
    "name",
    [
        "t" * 64,
        "t" * 60 + ".x",  # escapes to 64 characters: "-2e" for the dot
    ],
)
def test_a_name_of_exactly_64_mapped_characters_is_kept(names, name: str) -> None:
    mapped = names.provider_tool_name(name)
    assert len(mapped) == 64
    assert mapped == names.escape(name)
    assert names.timeline_tool_name(mapped) == name, "reverses without a declared list"


@pytest.mark.parametrize("names", MAPPINGS, ids=["render", "client"])
@pytest.mark.parametrize(
    "name",
    [
        "t" * 65,
        "t" * 61 + ".x",  # escapes to 65 characters
    ],
)
def test_a_name_of_65_mapped_characters_is_shortened(names, name: str) -> None:
    mapped = names.provider_tool_name(name)
    assert len(mapped) == 50 + 2 + 12
    assert mapped.startswith("t" * 50) and mapped[50:52] == "-h"
    assert core.NAME_PATTERN.match(mapped)
    assert names.timeline_tool_name(mapped, declared=["other", name]) == name
    with pytest.raises(ValueError):
        names.timeline_tool_name(mapped)  # a shortened name needs the declared list
