"""``so:sources_pool[3,5-6]`` selectors on ``blocks/?path=`` (issue 12 point 3), through HTTP."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db
C = "/api/v1/conversations"


@pytest.fixture
def pool(owner, conversation):
    urls = [{"url": f"https://s{k}.example", "title": f"S{k}"} for k in range(1, 8)]
    assert owner.post(f"{C}/c1/sources/", {"sources": urls}).status_code == 200
    return owner


def read(caller, path: str, context: str = ""):
    base = f"{C}/c1/contexts/{context}" if context else f"{C}/c1"
    return caller.get(f"{base}/blocks/", path=path)


def test_a_list_selector_reads_sids_and_ranges_by_ascending_sid_once_each(pool):
    answer = read(pool, "so:sources_pool[6,3,5-6,1-2]")
    assert answer.status_code == 200
    body = answer.json()
    assert body["blocks"] == []
    assert [s["sid"] for s in body["sources_pool"]] == [1, 2, 3, 5, 6]
    assert [s["title"] for s in body["sources_pool"]] == ["S1", "S2", "S3", "S5", "S6"]
    assert [s["sid"] for s in read(pool, "so:sources_pool[4,2]").json()["sources_pool"]] == [2, 4]
    assert read(pool, "so:sources_pool[ 4 , 2 ]").status_code == 400, "a path holds no whitespace"
    assert [s["sid"] for s in read(pool, "so:sources_pool[7]").json()["sources_pool"]] == [7]


@pytest.mark.parametrize(
    "path",
    [
        "so:sources_pool[3,]",
        "so:sources_pool[]",
        "so:sources_pool[6-5]",
        "so:sources_pool[3;5]",
        "so:sources_pool[x]",
        "so:sources_pool[-3]",
        "so:sources_pool[3]x",
        "so:sources_pool",
        "so:sources_pool[99999999999]",
        "so:sources_pool[" + ",".join(["1"] * 101) + "]",
    ],
)
def test_a_malformed_selector_is_a_400_in_the_error_shape(pool, path):
    answer = read(pool, path)
    assert answer.status_code == 400, answer.content
    error = answer.json()["error"]
    assert set(error) == {"code", "message", "details"}
    assert error["code"] == "invalid" and error["message"] and "path" in error["details"]


def test_unknown_sids_are_named_in_the_details_of_a_404(pool):
    answer = read(pool, "so:sources_pool[2,9,5-6,20-30,9]")
    assert answer.status_code == 404
    error = answer.json()["error"]
    assert error["code"] == "not_found"
    assert error["details"] == {"path": "so:sources_pool[2,9,5-6,20-30,9]", "unknown_sids": ["9", "20-30"]}


def test_the_range_path_a_render_shows_reads_back_despite_gaps(pool, owner):
    answer = read(owner, "so:sources_pool[1-7]")
    assert [s["sid"] for s in answer.json()["sources_pool"]] == [1, 2, 3, 4, 5, 6, 7]
    # a range covering sids the pool lacks still reads the sources inside it
    assert [s["sid"] for s in read(owner, "so:sources_pool[6-12]").json()["sources_pool"]] == [6, 7]


def test_selectors_work_under_a_named_context(owner, conversation):
    assert owner.post(f"{C}/c1/contexts/", {"name": "side"}).status_code == 201
    owner.post(f"{C}/c1/contexts/side/sources/", {"sources": [{"url": "https://a"}, {"url": "https://b"}]})
    answer = read(owner, "so:sources_pool[2,1]", context="side")
    assert [s["sid"] for s in answer.json()["sources_pool"]] == [1, 2]
    assert read(owner, "so:sources_pool[1,3]", context="side").json()["error"]["details"]["unknown_sids"] == [
        "3"
    ]
