"""Every read returns only the caller's own conversation's rows.

The fixture plants the same conversation id, paths, message ids and search word for a second
tenant and for a second conversation of the same tenant; each read must show the caller's marker
and none of the others'."""

from __future__ import annotations

import json

import pytest

from tests.fixtures.two_tenants import CONTEXT, MESSAGE_ID, TOOL_RESULT_PATH, WORD

pytestmark = pytest.mark.django_db


def _only_mine(response, two_tenants) -> str:
    assert response.status_code == 200, response.content
    body = response.content.decode()
    assert two_tenants.mine.marker in body
    for marker in two_tenants.foreign_markers():
        assert marker not in body
    return body


PREFIXES = [pytest.param("", id="main"), pytest.param(f"contexts/{CONTEXT}/", id="named-context")]


@pytest.mark.parametrize("prefix", PREFIXES)
def test_search_returns_only_the_callers_blocks(two_tenants, prefix):
    mine = two_tenants.mine
    response = mine.caller.get(f"{mine.url}{prefix}search/", q=WORD)
    _only_mine(response, two_tenants)
    results = response.json()["results"]
    # The prompt, the call and the result of this one conversation; nothing twice.
    assert sorted(hit["path"] for hit in results) == sorted({hit["path"] for hit in results})
    assert TOOL_RESULT_PATH in [hit["path"] for hit in results]


@pytest.mark.parametrize("prefix", PREFIXES)
def test_read_by_path_returns_only_the_callers_block(two_tenants, prefix):
    mine = two_tenants.mine
    response = mine.caller.get(f"{mine.url}{prefix}blocks/", path=TOOL_RESULT_PATH)
    _only_mine(response, two_tenants)
    blocks = response.json()["blocks"]
    assert [block["path"] for block in blocks] == [TOOL_RESULT_PATH]


@pytest.mark.parametrize("prefix", PREFIXES)
def test_read_sources_range_returns_only_the_callers_sources(two_tenants, prefix):
    mine = two_tenants.mine
    response = mine.caller.get(f"{mine.url}{prefix}blocks/", path="so:sources_pool[1-1]")
    _only_mine(response, two_tenants)
    assert [row["sid"] for row in response.json()["sources_pool"]] == [1]


@pytest.mark.parametrize("prefix", PREFIXES)
def test_sources_pool_is_only_the_callers(two_tenants, prefix):
    mine = two_tenants.mine
    response = mine.caller.get(f"{mine.url}{prefix}sources/")
    _only_mine(response, two_tenants)
    assert len(response.json()["sources_pool"]) == 1


@pytest.mark.parametrize("prefix", PREFIXES)
def test_export_holds_only_the_callers_blocks(two_tenants, prefix):
    mine = two_tenants.mine
    for window in ("all", "visible"):
        _only_mine(mine.caller.get(f"{mine.url}{prefix}timeline/", window=window), two_tenants)


@pytest.mark.parametrize("prefix", PREFIXES)
def test_messages_are_only_the_callers(two_tenants, prefix):
    mine = two_tenants.mine
    response = mine.caller.get(f"{mine.url}{prefix}messages/")
    _only_mine(response, two_tenants)
    assert [m["message_id"] for m in response.json()["messages"]] == [MESSAGE_ID]


def test_full_context_merges_only_the_callers_contexts(two_tenants):
    mine = two_tenants.mine
    for labels in ("", "main,attempt"):
        response = mine.caller.get(f"{mine.url}full-context/", labels=labels)
        _only_mine(response, two_tenants)
        # main and attempt_a hold the same message_id: deduplicated to one.
        assert [m["message_id"] for m in response.json()["messages"]] == [MESSAGE_ID]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("fmt", ["text", "anthropic", "openai"])
def test_render_shows_only_the_callers_blocks(two_tenants, prefix, fmt):
    mine = two_tenants.mine
    response = mine.caller.post(f"{mine.url}{prefix}render/", {"format": fmt, "include_sources": True})
    _only_mine(response, two_tenants)


def test_contexts_list_and_detail_count_only_the_callers_messages(two_tenants):
    mine = two_tenants.mine
    listing = mine.caller.get(f"{mine.url}contexts/")
    assert listing.status_code == 200
    counts = {c["name"]: c for c in listing.json()["contexts"]}
    assert sorted(counts) == ["attempt_a", "main"]
    detail = mine.caller.get(f"{mine.url}contexts/{CONTEXT}/")
    assert detail.status_code == 200
    assert json.dumps(detail.json()) == json.dumps(counts[CONTEXT])


@pytest.mark.parametrize(
    "path",
    [
        "search/?q=ribeira",
        f"blocks/?path={TOOL_RESULT_PATH}",
        "sources/",
        "timeline/",
        "messages/",
        "full-context/",
        "contexts/",
        f"contexts/{CONTEXT}/",
    ],
)
def test_the_other_tenant_reads_only_its_own_conversation_of_the_same_id(two_tenants, path):
    other = two_tenants.other_tenant
    mine = two_tenants.mine
    # Same public id, other tenant: the caller sees its own, the other tenant sees its own.
    theirs = other.caller.get(f"{other.url}{path}")
    assert theirs.status_code == 200
    assert mine.marker not in theirs.content.decode()
    assert two_tenants.same_tenant.marker not in theirs.content.decode()


def test_a_block_without_turn_id_joins_the_callers_latest_turn_not_anothers(two_tenants):
    """Blocks sent without ``turn_id`` join the timeline's latest turn header: the lookup must be
    scoped to the caller's timeline, though another tenant's newest header has the higher seq."""
    for side in (two_tenants.other_tenant, two_tenants.same_tenant):
        response = side.caller.post(f"{side.url}turns/", {"turn_id": "turn_9", "prompt": "later"})
        assert response.status_code == 201, response.content
    mine = two_tenants.mine
    response = mine.caller.post(
        f"{mine.url}blocks/", {"blocks": [{"type": "react.notes", "author": "react", "text": "no turn"}]}
    )
    assert response.status_code == 201, response.content
    assert [block["turn_id"] for block in response.json()["blocks"]] == ["turn_1"]
