"""``GET …/compactions/`` and ``…/compactions/{id}/``; ``POST …/compact/`` answers 202 with that id
(a ``queued`` row the task finishes) or 200 with it (``wait``)."""

from __future__ import annotations

import pytest
from django.utils import timezone

from tests.factories import add_turns
from tests.fixtures.two_tenants import CONTEXT
from timeline_app.models import Compaction, Timeline
from timeline_app.services.compaction import BUSY, NOTHING_TO_DO, background
from timeline_app.tasks import compact_timeline

pytestmark = pytest.mark.django_db
BASE = "/api/v1/conversations/c1"


@pytest.fixture
def queue(monkeypatch):
    """The broker: tasks queued here, not run (a worker runs them by calling ``run``)."""
    queued: list[dict] = []

    class Result:
        def __init__(self, task_id):
            self.id = task_id

    def apply_async(args, expires=None, task_id=None, **kwargs):
        queued.append({"args": args, "task_id": task_id})
        return Result(task_id)

    monkeypatch.setattr(background.current_app.tasks[background.COMPACT_TASK], "apply_async", apply_async)
    return queued


def work(queued: list[dict]) -> list[dict]:
    """The worker: run every queued task (same task id), oldest first."""
    results = [compact_timeline.apply(args=item["args"], task_id=item["task_id"]).get() for item in queued]
    queued.clear()
    return results


class Verbose:
    """A summary longer than what it replaces (a compaction the acceptance rule rejects)."""

    name = "verbose"
    model = "verbose-test"

    def summarize(self, *, blocks, previous_summary, max_tokens, purpose) -> str:
        return " ".join(f"word{i}" for i in range(4000))


def main(conversation) -> Timeline:
    return Timeline.objects.get(conversation=conversation, name="main")


def test_compact_answers_the_queued_id_and_the_url_follows_it_to_applied(owner, conversation, queue):
    add_turns(main(conversation), 4)
    response = owner.post(f"{BASE}/compact/", {"force": True})
    assert response.status_code == 202, response.content
    body = response.json()
    assert body["status"] == "queued" and body["id"].startswith("cmp_")
    assert body["url"] == f"http://testserver{BASE}/compactions/{body['id']}/"
    assert body["task_id"] == queue[0]["task_id"]
    before = owner.get(body["url"]).json()
    assert (before["status"], before["trigger"], before["summary_path"], before["finished_at"]) == (
        "queued",
        "manual",
        None,
        None,
    )

    work(queue)
    after = owner.get(body["url"])
    assert after.status_code == 200
    record = after.json()
    assert record["status"] == "applied"
    assert record["id"] == body["id"] and record["url"] == body["url"]
    assert record["summary_path"].startswith("su:")
    assert record["covered_turn_ids"][0] == "turn_1"
    assert record["before_tokens"] > record["after_tokens"] > 0
    assert record["finished_at"] is not None and record["error"] == ""
    assert Compaction.objects.count() == 1  # the queued row became the outcome, no second row


def test_asking_again_while_one_is_queued_answers_that_one(owner, conversation, queue):
    add_turns(main(conversation), 4)
    first = owner.post(f"{BASE}/compact/", {"force": True}).json()
    second = owner.post(f"{BASE}/compact/", {"force": True}).json()
    assert second["id"] == first["id"] and len(queue) == 1
    work(queue)
    third = owner.post(f"{BASE}/compact/", {"force": True}).json()
    assert third["id"] != first["id"] and third["status"] == "queued"


def test_a_queued_compaction_with_nothing_to_do_is_skipped_with_the_reason(owner, conversation, queue):
    add_turns(main(conversation), 1)
    queued = owner.post(f"{BASE}/compact/", {}).json()
    work(queue)
    record = owner.get(queued["url"]).json()
    before = record["before_tokens"]
    assert before > 0 and record["status"] == "skipped"
    # the numbers that decided it: the tokens, the threshold (0.9 × 200,000 by default), max_tokens
    assert record["error"] == f"{NOTHING_TO_DO}: {before:,} tokens, threshold 180,000 of max_tokens 200,000"


def test_a_waited_compaction_finding_another_running_is_a_skipped_row(owner, conversation):
    timeline = main(conversation)
    add_turns(timeline, 4)
    Compaction.objects.create(timeline=timeline, trigger="render", started_at=timezone.now())
    body = owner.post(f"{BASE}/compact/", {"force": True, "wait": True}).json()
    assert (body["status"], body["error"]) == ("skipped", BUSY)
    assert owner.get(body["url"]).json() == body


def test_a_rejected_compaction_says_why_with_the_numbers(owner, conversation, monkeypatch):
    monkeypatch.setattr("timeline_app.services.compaction.run.configured_summarizer", lambda **_: Verbose())
    add_turns(main(conversation), 2)
    body = owner.post(f"{BASE}/compact/", {"force": True, "wait": True}).json()
    assert body["status"] == "rejected" and body["after_tokens"] >= body["before_tokens"]
    assert body["error"].startswith(
        f"rejected: the context would not shrink ({body['before_tokens']:,} tokens before, "
        f"{body['after_tokens']:,} after)"
    )
    assert owner.get(body["url"]).json() == body


def test_a_queued_compaction_finding_another_running_is_skipped_as_busy(owner, conversation, queue):
    timeline = main(conversation)
    add_turns(timeline, 4)
    queued = owner.post(f"{BASE}/compact/", {"force": True}).json()
    running = Compaction.objects.create(timeline=timeline, trigger="render", started_at=timezone.now())
    assert work(queue)[0]["status"] == "busy"
    record = owner.get(queued["url"]).json()
    assert (record["status"], record["error"]) == ("skipped", BUSY)
    running.refresh_from_db()
    assert running.status == "running"


def test_a_redelivered_task_finishes_its_own_row(owner, conversation, queue):
    add_turns(main(conversation), 4)
    queued = owner.post(f"{BASE}/compact/", {"force": True}).json()
    item = queue[0]
    # the first delivery claimed the row, then its worker died
    Compaction.objects.filter(public_id=queued["id"]).update(status="running", task_id=item["task_id"])
    work(queue)
    assert owner.get(queued["url"]).json()["status"] == "applied"
    assert Compaction.objects.count() == 1


def test_compact_in_eager_mode_answers_the_finished_compaction(owner, conversation):
    add_turns(main(conversation), 4)
    body = owner.post(f"{BASE}/compact/", {"force": True}).json()
    assert body["status"] == "applied"  # the embedded mode runs the task inside the request
    assert owner.get(body["url"]).json()["status"] == "applied"


def test_compact_with_wait_answers_the_id(owner, conversation):
    add_turns(main(conversation), 4)
    body = owner.post(f"{BASE}/compact/", {"force": True, "wait": True}).json()
    assert body["status"] == "applied"
    record = owner.get(f"{BASE}/compactions/{body['id']}/").json()
    assert record["summary_path"] == body["summary_path"]
    assert body == record  # one account: the wait answer is the detail
    nothing = owner.post(f"{BASE}/compact/", {"wait": True}).json()
    assert nothing["status"] == "skipped" and nothing["error"].startswith(NOTHING_TO_DO)
    assert owner.get(f"{BASE}/compactions/{nothing['id']}/").json() == nothing
    listed = owner.get(f"{BASE}/compactions/").json()["results"]
    assert [row["id"] for row in listed] == [nothing["id"], body["id"]]  # every attempt is listed


def test_the_list_is_newest_first_and_paginates_by_id(owner, conversation):
    timeline = main(conversation)
    rows = [
        Compaction.objects.create(
            timeline=timeline, trigger="manual", status="skipped", started_at=timezone.now()
        )
        for _ in range(5)
    ]
    ids, url, params = [], f"{BASE}/compactions/", {"limit": 2}
    while url:
        page = owner.get(url, **params)
        assert page.status_code == 200, page.content
        ids += [r["id"] for r in page.json()["results"]]
        url, params = page.json()["next"], {}
    assert ids == [row.public_id for row in reversed(rows)]
    assert owner.get(f"{BASE}/compactions/").json()["next"] is None


@pytest.mark.parametrize("params", [{"limit": "0"}, {"limit": "201"}, {"cursor": "nope"}])
def test_bad_list_parameters_are_a_400(owner, conversation, params):
    response = owner.get(f"{BASE}/compactions/", **params)
    assert response.status_code == 400, response.content
    assert response.json()["error"]["code"] == "invalid"


def test_a_cursor_naming_no_compaction_of_the_context_is_a_404(owner, conversation):
    response = owner.get(f"{BASE}/compactions/", cursor="cmp_0000000000000000")
    assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"


def test_compactions_are_seen_only_in_their_own_context(two_tenants):
    """acme/c1 main, acme/c1 attempt_a, acme/c2 and globex/c1 each hold one compaction."""
    mine, same, other = two_tenants.mine, two_tenants.same_tenant, two_tenants.other_tenant
    ids = {}
    for key, side, prefix in (
        ("mine", mine, mine.url),
        ("named", mine, f"{mine.url}contexts/{CONTEXT}/"),
        ("same", same, same.url),
        ("other", other, other.url),
    ):
        timeline = Timeline.objects.get(
            conversation=side.conversation, name=CONTEXT if "contexts" in prefix else "main"
        )
        ids[key] = Compaction.objects.create(
            timeline=timeline, trigger="manual", status="skipped", started_at=timezone.now()
        ).public_id
    listed = mine.caller.get(f"{mine.url}compactions/").json()["results"]
    assert [r["id"] for r in listed] == [ids["mine"]]
    named = mine.caller.get(f"{mine.url}contexts/{CONTEXT}/compactions/").json()["results"]
    assert [r["id"] for r in named] == [ids["named"]]
    assert mine.caller.get(f"{mine.url}compactions/{ids['mine']}/").status_code == 200
    for foreign in ("named", "same", "other"):
        assert mine.caller.get(f"{mine.url}compactions/{ids[foreign]}/").status_code == 404, foreign
        cursor = mine.caller.get(f"{mine.url}compactions/", cursor=ids[foreign])
        assert cursor.status_code == 404, foreign
    assert other.caller.get(f"/api/v1/conversations/c2/compactions/{ids['same']}/").status_code == 404
    assert other.caller.get(f"{other.url}compactions/{ids['mine']}/").status_code == 404


def test_an_unknown_compaction_id_is_a_404(owner, conversation):
    response = owner.get(f"{BASE}/compactions/cmp_0123456789abcdef/")
    assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"
