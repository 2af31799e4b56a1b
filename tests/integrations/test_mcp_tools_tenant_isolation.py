"""The seven MCP tools of ``timeline-mcp`` keep to the key's tenant (issue 26). The server is built
in-process over the Django app (``wsgi_http``), so these requests run in this process and the
stripped-filter re-run (``make test-rls``, docs/testing.md) covers them: another tenant's
conversation with the same id, context, paths, words and sources is planted, and no tool shows or
touches it."""

from __future__ import annotations

from typing import Any

import pytest
from mcp.server.mcpserver.exceptions import ToolError
from timeline_client import TimelineClient
from timeline_client.mcp_server import build_server

from tests.factories import add_turn
from tests.fixtures.two_tenants import CONTEXT, TOOL_RESULT_PATH, WORD
from timeline_app.models import Block, Compaction, Timeline
from timeline_app.selectors.settings import timeline_settings
from timeline_app.services.compaction import compaction_run
from timeline_app.services.conversations import conversation_create

pytestmark = pytest.mark.django_db


def call(server: Any, tool: str, **arguments: Any) -> str:
    """The tool's own function, called in the test's thread: the SDK's ``call_tool`` runs a
    synchronous tool in a worker thread, on another database connection than the test's (which
    holds the test's transaction and, in the stripped re-run, the application role)."""
    function = server._tool_manager.get_tool(tool).fn
    return str(function(**arguments))


@pytest.fixture
def mcp_for(two_tenants, wsgi_http):
    """An MCP server over acme's key, bound to a conversation and a context. The tenants are
    planted first: Django's test client (which plants them) reconnects ``close_old_connections``
    after each request, which ``wsgi_http`` must then take off again."""

    def build(conversation: str = "c1", context: str = "main") -> Any:
        client = TimelineClient("http://testserver", two_tenants.mine.caller.raw_key, http_client=wsgi_http)
        return build_server(client, conversation, context)

    return build


@pytest.mark.parametrize("context", ["main", CONTEXT])
def test_the_read_only_tools_show_the_keys_conversation_only(mcp_for, two_tenants, context):
    server = mcp_for("c1", context)
    answers = {
        "read": call(server, "timeline_read", path=TOOL_RESULT_PATH),
        "search": call(server, "timeline_search", query=WORD),
        "sources": call(server, "timeline_sources"),
        "render text": call(server, "timeline_render", format="text"),
        "render anthropic": call(server, "timeline_render", format="anthropic"),
        "render openai_chat": call(server, "timeline_render", format="openai_chat"),
    }
    for tool, text in answers.items():
        if tool != "search":  # search answers paths and snippets
            assert two_tenants.mine.marker in text, tool
        for foreign in two_tenants.foreign_markers():
            assert foreign not in text, (tool, foreign)
    assert "No stored block matches" not in answers["search"]


@pytest.mark.parametrize("context", ["main", CONTEXT])
def test_hide_and_unhide_touch_the_keys_conversation_only(mcp_for, two_tenants, context):
    server = mcp_for("c1", context)
    assert "Hid 1 block(s)" in call(server, "timeline_hide", path=TOOL_RESULT_PATH, replacement_text="gone")
    assert "render in full" in call(server, "timeline_unhide", path=TOOL_RESULT_PATH)
    assert "Hid 1 block(s)" in call(server, "timeline_hide", path=TOOL_RESULT_PATH, replacement_text="gone")

    hidden = dict(
        Block.objects.filter(path=TOOL_RESULT_PATH, timeline__name=context)
        .values_list("conversation__tenant__name", "hidden")
        .order_by()
        .filter(conversation__public_id="c1")
    )
    assert hidden == {"acme": True, "globex": False}
    assert not Block.objects.get(
        conversation=two_tenants.same_tenant.conversation, path=TOOL_RESULT_PATH, timeline__name=context
    ).hidden


def test_a_conversation_only_another_tenant_has_is_not_found(mcp_for, two_tenants):
    conversation_create(tenant=two_tenants.other_tenant.caller.tenant, public_id="globex-only")
    server = mcp_for("globex-only")
    for tool, arguments in [
        ("timeline_read", {"path": TOOL_RESULT_PATH}),
        ("timeline_search", {"query": WORD}),
        ("timeline_sources", {}),
        ("timeline_render", {"format": "text"}),
        ("timeline_hide", {"path": TOOL_RESULT_PATH, "replacement_text": "gone"}),
        ("timeline_unhide", {"path": TOOL_RESULT_PATH}),
        ("timeline_revert_compaction", {}),
        ("timeline_revert_compaction", {"compaction_id": "cmp_0123456789abcdef"}),
    ]:
        with pytest.raises(ToolError, match="HTTP 404"):
            call(server, tool, **arguments)


def test_every_tool_of_the_server_is_covered_here(mcp_for):
    """A tool added later must join these tests (and so the stripped re-run)."""
    import asyncio

    names = {tool.name for tool in asyncio.run(mcp_for().list_tools())}
    assert names == {
        "timeline_read",
        "timeline_search",
        "timeline_sources",
        "timeline_render",
        "timeline_hide",
        "timeline_unhide",
        "timeline_record_reply",
        "timeline_record_tool_results",
        "timeline_revert_compaction",
    }


@pytest.mark.parametrize("context", ["main", CONTEXT])
def test_a_recorded_reply_and_its_results_land_in_the_keys_conversation_only(mcp_for, two_tenants, context):
    server = mcp_for(context=context)
    reply = {
        "id": "msg_mcp",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [{"type": "tool_use", "id": "toolu_mcp", "name": "search", "input": {"q": WORD}}],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    theirs_before = Block.objects.filter(tenant=two_tenants.other_tenant.caller.tenant).count()

    answer = call(server, "timeline_record_reply", response=reply)
    stored = call(server, "timeline_record_tool_results", results={"toolu_mcp": "found"}, errors=[])

    assert '"tool_call_id": "toolu_mcp"' in answer and "toolu_mcp.result" in stored
    mine = Block.objects.filter(
        tenant=two_tenants.mine.caller.tenant, timeline__name=context, meta__tool_call_id="toolu_mcp"
    )
    assert sorted(mine.values_list("type", flat=True)) == ["react.tool.call", "react.tool.result"]
    assert Block.objects.filter(tenant=two_tenants.other_tenant.caller.tenant).count() == theirs_before
    with pytest.raises(ToolError, match="toolu_theirs"):
        call(server, "timeline_record_tool_results", results={"toolu_theirs": "x"})


@pytest.mark.parametrize("context", ["main", CONTEXT])
def test_revert_takes_back_the_keys_compaction_only(mcp_for, two_tenants, context):
    """Every side compacted; acme/c1's tool reverts acme/c1's, and another side's id is a 404."""
    ids = {}
    for key, side in (
        ("mine", two_tenants.mine),
        ("same", two_tenants.same_tenant),
        ("other", two_tenants.other_tenant),
    ):
        timeline = Timeline.objects.get(conversation=side.conversation, name=context)
        for number in (1, 2, 3):  # turns of their own: the planted ones hold turn_1 already
            add_turn(timeline, number, turn_id=f"turn_r{number}")
        outcome = compaction_run(
            timeline=timeline, settings=timeline_settings(timeline=timeline), trigger="manual", force=True
        )
        assert outcome.status == "applied", key
        ids[key] = Compaction.objects.get(pk=outcome.compaction_id).public_id
    server = mcp_for("c1", context)
    for foreign in ("same", "other"):
        with pytest.raises(ToolError, match="HTTP 404"):
            call(server, "timeline_revert_compaction", compaction_id=ids[foreign])
    assert f"Reverted {ids['mine']}" in call(server, "timeline_revert_compaction")
    statuses = dict(Compaction.objects.filter(public_id__in=ids.values()).values_list("public_id", "status"))
    assert statuses == {ids["mine"]: "reverted", ids["same"]: "applied", ids["other"]: "applied"}
    assert "no applied compaction" in call(server, "timeline_revert_compaction")
