"""Seed 004's label and full-context rules through a1's own functions, on ``TimelineRuntime``, checked
against a1's in-memory ``Runtime`` doing the same: names ``label_a``, ``label_b``…, a branch shares
its messages' ids, ``get_full_context`` merges by label prefix, once per id, in time order."""

from __future__ import annotations

import json

from a1 import Runtime, get_context, get_runtime, new_context, set_runtime
from timeline_client.a1 import TimelineRuntime

from .conftest import dumped, in_other_process


def play() -> dict:
    """The same a1 calls on whatever runtime is set; what they show."""
    main = get_context("main")
    main.user("Solve problem A")
    attempt = new_context("attempt", branch_from=main)
    attempt.assistant("first try")
    second = new_context("attempt")
    second.user("second try")
    intermediate = new_context("intermediate")
    intermediate.user("llm call")
    get_context("attempts").user("not an attempt_ context")
    get_context("main_2").user("matches main")
    main.assistant("4")
    runtime = get_runtime()

    def view(messages):
        return [(m.role, m.content, m.message_id) for m in messages]

    return {
        "names": sorted(dict.keys(runtime.CTX)),
        "all": view(runtime.get_full_context()),
        "main": view(runtime.get_full_context("main")),
        "attempt": view(runtime.get_full_context("attempt")),
        "main+intermediate": view(runtime.get_full_context(["main", "intermediate"])),
        "none": view(runtime.get_full_context([])),
        "branch_ids": [m.message_id for m in attempt.messages[:1]]
        == [m.message_id for m in main.messages[:1]],
    }


def test_names_branches_and_full_context_match_a1(client, conversation, tmp_path):
    set_runtime(Runtime(cache_dir=str(tmp_path / ".a1")))
    expected = play()
    set_runtime(TimelineRuntime(client, conversation, cache_dir=str(tmp_path / ".a1")))
    got = play()

    def shape(result):  # message ids differ between the two runs: compare their places
        ids = {}
        return {
            key: [(role, content, ids.setdefault(mid, len(ids))) for role, content, mid in value]
            if isinstance(value, list) and value and isinstance(value[0], tuple)
            else value
            for key, value in result.items()
        }

    assert got["names"] == ["attempt_a", "attempt_b", "attempts", "intermediate_a", "main", "main_2"]
    assert shape(got) == shape(expected)
    assert got["branch_ids"] is True
    assert [content for _, content, _ in got["attempt"]] == ["Solve problem A", "first try", "second try"]
    assert "not an attempt_ context" not in [content for _, content, _ in got["attempt"]]
    assert got["none"] == []


def test_a_second_process_takes_the_next_free_name_and_sees_the_full_context(client, conversation):
    set_runtime(TimelineRuntime(client, conversation))
    main = get_context("main")
    main.user("question")
    new_context("attempt", branch_from=main).assistant("try a")
    out = in_other_process(
        conversation,
        """
        ctx = new_context("attempt")
        ctx.assistant("try b")
        print(json.dumps([name for name in runtime.CTX]))
        dump(runtime.get_full_context("attempt"))
        """,
    )
    names = json.loads(out.strip().splitlines()[-2])
    assert sorted(names) == ["attempt_a", "attempt_b", "main"]
    merged = dumped(out)
    assert [m["content"] for m in merged] == ["question", "try a", "try b"]
    assert len({m["message_id"] for m in merged}) == 3
    assert [m.content for m in get_runtime().get_full_context("attempt")] == ["question", "try a", "try b"]
