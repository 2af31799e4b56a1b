"""Errors and artifacts recognised by their shape (issue 37): one sample per rule that only that
rule knows, so taking a rule out of its list fails its test; then the summary keeps them."""

from __future__ import annotations

import pytest

from compaction.summary import ExtractiveSummarizer, shapes
from compaction.summary.cues import is_acknowledgement
from compaction.summary.extract import (
    constraint_sentences,
    decision_sentences,
    error_of,
    text_listing,
    tool_action,
)
from compaction.summary.sections import is_identifier
from timeline_app.domain.blocks import ASSISTANT_COMPLETION, TOOL_RESULT, Block

ERROR_SAMPLES = [
    (shapes.http_error_status, "HTTP 502 from billing-api", "HTTP 502 from billing-api"),
    (shapes.http_error_status, "HTTP/1.1 503 Service Unavailable", "503 Service Unavailable"),
    (shapes.exception_name, "IndexError: list index out of range", "IndexError"),
    (shapes.exception_name, 'Exception in thread "main" java.lang.NullPointerException: x', "NullPointer"),
    (
        shapes.failing_test,
        "FAILED tests/api/test_orders.py::test_refund_total - assert 3 == 2",
        "test_refund",
    ),
    (shapes.failing_test, "--- FAIL: TestParseHeader (0.00s)", "TestParseHeader"),
    (shapes.nonzero_exit, "exit status 137", "exit status 137"),
    (shapes.nonzero_exit, "Process exited with code 2", "code 2"),
    (shapes.failure_word, "deploy@web-1: Permission denied (publickey).", "Permission denied"),
    (shapes.failure_word, "waiting for api to become ready... timed out after 30s", "timed out"),
    (shapes.failure_word, "Killed", "Killed"),
]


@pytest.mark.parametrize(("rule", "line", "kept"), ERROR_SAMPLES)
def test_each_error_rule_knows_a_line_no_other_rule_knows(rule, line: str, kept: str) -> None:  # type: ignore[no-untyped-def]
    assert rule in shapes.ERROR_RULES
    others = [r for r in shapes.ERROR_RULES if r is not rule]
    assert shapes.error_line(f"$ run\n{line}\ndone", others) is None  # without the rule: missed
    found = shapes.error_line(f"$ run\n{line}\ndone")
    assert found is not None and kept in found


@pytest.mark.parametrize(
    "text",
    [
        "NAME   READY   STATUS\napi-7d9f   1/1   Running",
        "HTTP/1.1 200 OK\ncontent-type: application/json",
        "tests/a/test_b.py::test_c PASSED [ 50%]",
        "exit status 0",
        '{"records": [{"order": "ORD-123456", "status": "shipped"}]}',
    ],
)
def test_output_without_an_error_has_no_error_line(text: str) -> None:
    assert shapes.error_line(text) is None


def test_a_traceback_is_known_by_its_last_line() -> None:
    text = 'Traceback (most recent call last):\n  File "/app/h.py", line 9, in handle\n    row = rows[0]\nKeyError: 0'
    assert shapes.error_line(text) == "KeyError: 0"


def test_prose_takes_only_the_strong_shapes() -> None:
    prose = "The retry failed twice, then timed out; I left it."
    assert shapes.error_line(prose, shapes.STRONG_ERROR_RULES) is None
    completion = Block(seq=1, type=ASSISTANT_COMPLETION, author="assistant", text=prose)
    assert error_of(completion) is None
    stated = Block(
        seq=2, type=ASSISTANT_COMPLETION, author="assistant", text="The call got HTTP 502 from auth-svc."
    )
    assert error_of(stated) == "The call got HTTP 502 from auth-svc."


def test_a_tool_result_with_an_error_shape_is_an_error_without_the_flag() -> None:
    result = Block(seq=1, type=TOOL_RESULT, author="tool", text="HTTP 502 from carrier-gw (upstream timeout)")
    assert result.meta.get("status") != "error"
    assert error_of(result) == "HTTP 502 from carrier-gw (upstream timeout)"


ARTIFACT_SAMPLES = [
    (
        shapes.object_store_url,
        "upload: ./x.parquet to s3://acme-exports/2026/orders.parquet",
        "s3://acme-exports/2026/orders.parquet",
        "upload",
    ),
    (
        shapes.object_store_url,
        "exported 1,204 rows to gs://acme-lake/daily/orders-3.csv",
        "gs://acme-lake/daily/orders-3.csv",
        "exported",
    ),
    (
        shapes.object_store_url,
        "Uploaded az://lake/raw/part-00012.parquet",
        "az://lake/raw/part-00012.parquet",
        "Uploaded",
    ),
    (
        shapes.file_url,
        "Report written to file:///home/agent/out/report.html",
        "file:///home/agent/out/report.html",
        "written",
    ),
    (
        shapes.https_file_url,
        "file downloaded from https://files.acme.io/exports/orders_4411.csv.gz (9 kB)",
        "https://files.acme.io/exports/orders_4411.csv.gz",
        "downloaded",
    ),
    (
        shapes.file_path,
        "Wrote /var/backups/api-20260105.tar.gz (41 MB)",
        "/var/backups/api-20260105.tar.gz",
        "Wrote",
    ),
    (
        shapes.written_table,
        "1,200 rows inserted into analytics.orders_weekly",
        "analytics.orders_weekly",
        "inserted",
    ),
    (shapes.bucket_name, "Created bucket acme-exports-eu in eu-west-1", "acme-exports-eu", "Created"),
]


@pytest.mark.parametrize(("rule", "line", "artifact", "action"), ARTIFACT_SAMPLES)
def test_each_artifact_rule_knows_a_line_no_other_rule_knows(
    rule, line: str, artifact: str, action: str
) -> None:  # type: ignore[no-untyped-def]
    assert rule in shapes.ARTIFACT_RULES
    others = [r for r in shapes.ARTIFACT_RULES if r is not rule]
    assert artifact not in dict(shapes.artifacts_in_text(line, others))  # without the rule: missed
    found = dict(shapes.artifacts_in_text(line))
    assert artifact in found
    assert found[artifact] == action


def test_a_path_without_an_action_is_no_artifact_and_json_is_left_to_its_structure() -> None:
    assert shapes.artifacts_in_text("see /var/log/app.log for details") == []
    assert shapes.artifacts_in_text('{"message": "export done", "path": "out/x.csv"}') == []


def test_the_last_action_on_an_artifact_wins() -> None:
    text = "generated xml file: reports/junit-api.xml\nreport written to reports/junit-api.xml"
    assert shapes.artifacts_in_text(text) == [("reports/junit-api.xml", "written")]


def test_a_tool_ids_verb_is_said_as_what_was_done() -> None:
    assert tool_action("fs.write") == "written, fs.write"
    assert tool_action("docs.save_itinerary") == "saved, docs.save_itinerary"
    assert tool_action("crm.lookup_order") == "crm.lookup_order"


def test_plain_first_person_completions_are_not_decisions() -> None:
    assert decision_sentences("I have the data I need for the next step.") == []
    assert decision_sentences("I pinned the library to 2.1.") == ["I pinned the library to 2.1."]


def test_the_summary_keeps_shaped_errors_and_artifacts_with_their_last_action() -> None:
    blocks = [
        Block(
            seq=1, type="user.prompt", author="user", turn_id="t1", text="Export the orders and upload them."
        ),
        Block(
            seq=2,
            type=TOOL_RESULT,
            author="tool",
            turn_id="t1",
            path="tc:t1.r1",
            text="upload: ./out/o.parquet to s3://acme-exports/2026/orders_q1.parquet",
        ),
        Block(
            seq=3,
            type=TOOL_RESULT,
            author="tool",
            turn_id="t1",
            path="tc:t1.r2",
            text="HTTP 502 from billing-api (upstream timeout)\nretry-after: 5",
        ),
    ]
    summary = ExtractiveSummarizer().summarize(blocks=blocks, previous_summary=None, max_tokens=400)
    lines = summary.splitlines()
    assert any("s3://acme-exports/2026/orders_q1.parquet" in line and "upload" in line for line in lines)
    assert any("HTTP 502 from billing-api" in line for line in lines)


def test_rows_of_a_plain_text_listing_are_a_listing_and_the_answer_line_is_not() -> None:
    text = "\n".join(
        [
            "NAME                       READY   STATUS    RESTARTS   AGE",
            "api-7d9f8c6b5-x2x8q        1/1     Running   0          12m",
            "api-7d9f8c6b5-k1k2m        1/1     Running   3          40m",
            "worker-5c4b3a2-zz9yq       0/1     Pending   0          2m",
            "-> suspect: worker-5c4b3a2-zz9yq",
        ]
    )
    answer, listing = text_listing(text)
    assert "-> suspect: worker-5c4b3a2-zz9yq" in answer and "NAME" in answer
    assert "api-7d9f8c6b5-x2x8q" in listing and "api-7d9f8c6b5-x2x8q" not in answer
    assert text_listing("HTTP 502 from auth-svc\nretry-after: 5") == (
        "HTTP 502 from auth-svc\nretry-after: 5",
        "",
    )


def test_a_rule_naming_an_identifier_after_the_request_is_a_constraint_the_request_is_not() -> None:
    prompt = "move the nightly export of etl-7 to the new bucket, see SUP-1234\nKeep everything in eu-west-1 for data residency."
    assert constraint_sentences(prompt) == ["Keep everything in eu-west-1 for data residency."]
    assert constraint_sentences("Rebook PNR0J5MO to Oslo and keep LX5479 as it is.") == []
    assert constraint_sentences("Never touch prod-db-01.") == ["Never touch prod-db-01."]


@pytest.mark.parametrize("token", ["arn:aws:iam::123456789012:role/etl-deploy", "cus_LORWHPRGVQBMWJ"])
def test_cloud_resource_names_are_identifiers(token: str) -> None:
    assert is_identifier(token)
    assert not is_identifier("snake_case_word")


def test_a_pruned_results_error_and_artifact_come_from_its_stored_text() -> None:
    traceback = (
        "Traceback (most recent call last):\n"
        + '  File "/app/x.py", line 9, in run\n' * 20
        + "KeyError: 'region'"
    )
    pruned = Block(
        seq=1,
        type=TOOL_RESULT,
        author="tool",
        path="tc:t1.r",
        text=traceback,
        hidden=True,
        replacement_text="[pruned after cache expiry] tc:t1.r — Traceback (most recent call last): File … (read it back by path)",
    )
    assert error_of(pruned) == "KeyError: 'region'"
    preview = "[pruned after cache expiry] tc:t2.r — Created testdata/a/b_1.golden (40 lines) (read it back by path)"
    assert shapes.artifacts_in_text(preview) == [("testdata/a/b_1.golden", "Created")]


@pytest.mark.parametrize("prompt", ["ok thx", "continue pls", "yep, do it", "k", "lgtm, next"])
def test_chat_style_acknowledgements_are_no_requests(prompt: str) -> None:
    assert is_acknowledgement(prompt)
