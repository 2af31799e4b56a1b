"""The client's tool-name mapping is the render's, so an agent declares its tools under the names
the native formats use."""

import pytest
from timeline_client import gemini_tool_name, provider_tool_name, timeline_tool_name

from timeline_app.rendering.native import tool_names as core

NAMES = [
    "web_tools.web_search",
    "get_weather",
    "fs-read",
    "outil_récupérer",
    "a" * 64,
    "a" * 65,
    "x.y-z" * 30,
    "1password.lookup",
    ".hidden",
    "-dash",
    "_private",
]


@pytest.mark.parametrize("name", NAMES)
def test_the_client_maps_tool_names_exactly_like_the_render(name):
    assert provider_tool_name(name) == core.provider_tool_name(name)
    assert timeline_tool_name(provider_tool_name(name), declared=NAMES) == name


@pytest.mark.parametrize("name", NAMES)
def test_the_gemini_name_starts_with_a_letter_or_underscore_and_maps_back(name):
    gemini = gemini_tool_name(provider_tool_name(name))
    assert gemini == core.gemini_tool_name(core.provider_tool_name(name))
    assert core.GEMINI_NAME_PATTERN.match(gemini), gemini
    assert timeline_tool_name(gemini, declared=NAMES) == name
    # Only the names Gemini would refuse change.
    assert (gemini == provider_tool_name(name)) == (
        name[:1].isascii() and (name[:1].isalpha() or name[0] == "_")
    )


def test_a_name_that_is_no_mapping_is_refused():
    with pytest.raises(ValueError):
        timeline_tool_name("web-search")


def test_the_client_copy_is_the_render_code_word_for_word():
    """The client imports no server code, so it carries a copy of the mapping: every function and
    constant of the copy is the render's, statement for statement (docstrings aside)."""
    import ast
    import inspect

    import timeline_client.tool_names as copy

    def definitions(module) -> dict[str, str]:
        tree = ast.parse(inspect.getsource(module))
        found = {}
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.ClassDef):
                found[node.name] = ast.dump(node)
            elif isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    found[ast.unparse(target)] = ast.dump(node)
        return found

    copied, original = definitions(copy), definitions(core)
    assert copied, "the copy defines the mapping"
    assert {name: original.get(name) for name in copied} == copied
