"""The client's tool-name mapping is the render's, so an agent declares its tools under the names
the native formats use."""

import pytest
from timeline_client import provider_tool_name, timeline_tool_name

from timeline_app.rendering.native import tool_names as core

NAMES = [
    "web_tools.web_search",
    "get_weather",
    "fs-read",
    "outil_récupérer",
    "a" * 64,
    "a" * 65,
    "x.y-z" * 30,
]


@pytest.mark.parametrize("name", NAMES)
def test_the_client_maps_tool_names_exactly_like_the_render(name):
    assert provider_tool_name(name) == core.provider_tool_name(name)
    assert timeline_tool_name(provider_tool_name(name), declared=NAMES) == name


def test_a_name_that_is_no_mapping_is_refused():
    with pytest.raises(ValueError):
        timeline_tool_name("web-search")
