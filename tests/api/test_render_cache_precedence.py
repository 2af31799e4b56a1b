"""The cache explainer's precedence (DESIGN §5: ``reason`` is "the first that applies, in this
order"): every pair of reasons made to apply together, through the real render path."""

from itertools import combinations

import pytest

from tests.factories import add_turn, add_turns

pytestmark = pytest.mark.django_db
BASE = "/api/v1/conversations/c1"
ORDER = ("first_render", "ttl_expired", "settings_changed", "compacted", "hidden", "appended_only", "other")
T0, WARM, COLD = "2026-03-01T12:00:00Z", "2026-03-01T12:01:00Z", "2026-03-01T12:10:00Z"
HIDDEN_PATH = "tc:turn_6.tc_6x1.result"  # the current turn's: retained by any compaction


def expected(pair: tuple[str, str]) -> str:
    """The first of the two in ``ORDER`` — but ``appended_only`` applies only when the previous
    prefix is intact, so any other change beats it."""
    first, second = pair
    return second if first == "appended_only" else first


PAIRS = [pytest.param(pair, id="-".join(pair)) for pair in combinations(ORDER, 2)]


@pytest.mark.parametrize("pair", PAIRS)
def test_with_two_reasons_the_first_that_applies_wins(owner, conversation, pair):
    timeline = conversation.timelines.get()
    add_turns(timeline, 6)
    if "first_render" not in pair:
        assert owner.post(f"{BASE}/render/", {"now": T0}).status_code == 200
    body: dict = {"now": COLD if "ttl_expired" in pair else WARM}
    if "compacted" in pair:
        compacted = owner.post(f"{BASE}/compact/", {"force": True, "wait": True}).json()
        assert compacted["status"] == "applied", compacted
    if "hidden" in pair:
        hidden = owner.post(f"{BASE}/hide/", {"path": HIDDEN_PATH, "replacement_text": "[read it by path]"})
        assert hidden.status_code == 200
    if "appended_only" in pair:
        add_turn(timeline, 7)
    if "settings_changed" in pair:
        body["exclude_contributions"] = ["react.notes"]
    if "other" in pair:  # a new system prompt: every segment's digest changes, no setting does
        body["system"] = "You are a terse assistant."

    response = owner.post(f"{BASE}/render/", body)

    assert response.status_code == 200, response.content
    assert response.json()["cache"]["reason"] == expected(pair)
