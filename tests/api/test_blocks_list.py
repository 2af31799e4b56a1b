"""``GET …/blocks/`` without ``path``: the context's blocks in seq order, cursor-paginated,
filtered by type, turn_id, hidden and since_seq."""

import pytest

from tests.factories import add_turns
from tests.fixtures.two_tenants import CONTEXT, TOOL_RESULT_PATH
from timeline_app.models import Timeline

pytestmark = pytest.mark.django_db
BASE = "/api/v1/conversations/c1"


def listed(caller, url=f"{BASE}/blocks/", **params):
    response = caller.get(url, **params)
    assert response.status_code == 200, response.content
    return response.json()


def test_the_list_walks_every_block_in_seq_order_page_by_page(owner, conversation):
    add_turns(Timeline.objects.get(conversation=conversation), 2)  # 2 × (2 + 2×3 + 1) = 18 blocks
    owner.post(f"{BASE}/hide/", {"path": "tc:turn_1.tc_1x0.result", "replacement_text": "x"})
    seqs, url, params, pages = [], f"{BASE}/blocks/", {"limit": 5}, 0
    while url:
        body = listed(owner, url, **params)
        seqs += [b["seq"] for b in body["blocks"]]
        url, params, pages = body["next"], {}, pages + 1
    assert seqs == list(range(1, 19))
    assert pages == 4
    everything = listed(owner)["blocks"]
    assert len(everything) == 18 and listed(owner)["next"] is None
    assert [b["path"] for b in everything if b["hidden"]] == ["tc:turn_1.tc_1x0.result"]


def test_filters_combine_and_the_next_page_keeps_them(owner, conversation):
    add_turns(Timeline.objects.get(conversation=conversation), 3)
    results = listed(owner, type="react.tool.result")["blocks"]
    assert [b["path"] for b in results][:2] == ["tc:turn_1.tc_1x0.result", "tc:turn_1.tc_1x1.result"]
    assert len(results) == 6
    page = listed(owner, type="react.tool.result", turn_id="turn_2", limit=1)
    assert [b["path"] for b in page["blocks"]] == ["tc:turn_2.tc_2x0.result"]
    second = listed(owner, page["next"])
    assert [b["path"] for b in second["blocks"]] == ["tc:turn_2.tc_2x1.result"]
    assert second["next"] is None or listed(owner, second["next"])["blocks"] == []
    owner.post(f"{BASE}/hide/", {"path": "tc:turn_3.tc_3x1.result", "replacement_text": "x"})
    assert [b["path"] for b in listed(owner, hidden="1")["blocks"]] == ["tc:turn_3.tc_3x1.result"]
    assert len(listed(owner, hidden="0")["blocks"]) == 26
    since = listed(owner, since_seq="20")["blocks"]
    assert [b["seq"] for b in since] == list(range(21, 28))
    assert listed(owner, since_seq="20", cursor="25")["blocks"][0]["seq"] == 26


@pytest.mark.parametrize(
    "params",
    [
        {"limit": "0"},
        {"limit": "201"},
        {"limit": "ten"},
        {"cursor": "-1"},
        {"since_seq": "x"},
        {"hidden": "maybe"},
        {"type": "Bad Type!"},
        {"turn_id": " "},
        {"include_hidden": "1"},
        {"path": TOOL_RESULT_PATH, "type": "react.tool.result"},
        {"path": TOOL_RESULT_PATH, "limit": "5"},
    ],
)
def test_bad_list_parameters_are_a_400(owner, conversation, params):
    response = owner.get(f"{BASE}/blocks/", **params)
    assert response.status_code == 400, response.content
    assert response.json()["error"]["code"] == "invalid"


def test_the_path_read_is_unchanged(owner, conversation):
    add_turns(Timeline.objects.get(conversation=conversation), 1)
    body = listed(owner, path="tc:turn_1.tc_1x0.result")
    assert [b["path"] for b in body["blocks"]] == ["tc:turn_1.tc_1x0.result"]
    assert body["next"] is None  # one answer, never paginated
    assert owner.get(f"{BASE}/blocks/", path="tc:turn_9.x.result").status_code == 404


def test_the_list_shows_only_the_addressed_context(two_tenants):
    """acme/c1 main and attempt_a, acme/c2 and globex/c1 hold blocks at the same seqs and paths."""
    mine, same, other = two_tenants.mine, two_tenants.same_tenant, two_tenants.other_tenant
    main = listed(mine.caller, f"{mine.url}blocks/")["blocks"]
    named = listed(mine.caller, f"{mine.url}contexts/{CONTEXT}/blocks/")["blocks"]
    theirs = listed(other.caller, f"{other.url}blocks/")["blocks"]
    for blocks, marker in ((main, mine.marker), (named, mine.marker), (theirs, other.marker)):
        texts = " ".join(b["text"] for b in blocks)
        assert marker in texts
        assert not any(m in texts for m in {mine.marker, same.marker, other.marker} - {marker})
    assert [b["seq"] for b in main] == list(range(1, len(main) + 1))
    assert TOOL_RESULT_PATH in {b["path"] for b in named}
    assert other.caller.get("/api/v1/conversations/c2/blocks/").status_code == 404
