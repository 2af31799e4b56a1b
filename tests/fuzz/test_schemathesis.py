"""Schemathesis against the live schema (``/api/schema/``) on PostgreSQL: every operation, every check.

``SCHEMATHESIS_MAX_EXAMPLES`` (default 50 per operation) runs it longer, for example
``SCHEMATHESIS_MAX_EXAMPLES=1000 TIMELINE_SKIP_CHECKS=1 bash scripts/test.sh tests/fuzz``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections, connection
from django.test import Client
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings
from rest_framework.throttling import ScopedRateThrottle
from schemathesis.config import SchemathesisConfig
from schemathesis.specs.openapi.checks import positive_data_acceptance

from timeline_app.domain.meta import meta_problem
from timeline_app.domain.settings import RenderSettings
from timeline_app.domain.thinking import thinking_block_problems
from timeline_app.models import Conversation, Tenant
from timeline_app.rendering.native.replies import ReplyError, parse_reply
from timeline_app.rendering.usage.reported import UsageError, read_usage
from timeline_app.services.api_keys import api_key_create
from timeline_app.services.blocks import meta_limits
from timeline_app.services.compaction import summary_model_problem
from timeline_app.services.conversations import conversation_create

MAX_EXAMPLES = int(os.environ.get("SCHEMATHESIS_MAX_EXAMPLES", "50"))
CONV = "fuzz"  # every {conv} in a path addresses this conversation of the caller's tenant
WRITES = ("POST", "PUT", "PATCH", "DELETE")


def inside_the_schema(body) -> bool:
    """Schema-valid and within the rules above; no NUL (PostgreSQL cannot store one)."""
    body = body if isinstance(body, dict | list) else None
    return respects_uniqueness(body) and "\\u0000" not in json.dumps(body)


def load_schema(*, allow_x00: bool) -> schemathesis.schemas.BaseSchema:
    config = SchemathesisConfig.from_dict(
        {
            "generation": {"max-examples": MAX_EXAMPLES, "allow-x00": allow_x00, "mode": "positive"},
            "parameters": {"conv": CONV},
            # The coverage phase's boundary values ignore `pattern` ("0" for `^[a-z]…`): off.
            "phases": {"coverage": {"enabled": False}},
        }
    )
    return schemathesis.openapi.from_wsgi("/api/schema/?format=json", get_wsgi_application(), config=config)


def _unique(values: list) -> bool:
    return len(values) == len(set(values))


def _items(body: dict, key: str) -> list[dict]:
    value = body.get(key)
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def respects_uniqueness(body) -> bool:
    """The rules JSON Schema cannot say, documented in the schema's descriptions: unique source
    urls (and sids), attachment names, message ids and a message's tool call ids, import seqs and
    block ids; an imported compaction names a summary block; an import's view starts at most one
    past its last seq; a message block carries a valid OpenAI message (services.export and
    services.blocks check these before writing)."""
    if not isinstance(body, dict):
        return True
    sources = _items(body, "sources") + _items(body, "sources_pool")
    messages = _items(body, "messages")
    blocks = _items(body, "blocks")
    return (
        _unique([s.get("url") for s in sources])
        and _unique([s.get("sid") for s in sources if "sid" in s])
        and _unique([a.get("name") for a in _items(body, "attachments")])
        and _unique([m["message_id"] for m in messages if "message_id" in m])
        and all(_unique([c.get("id") for c in _items(m, "tool_calls")]) for m in messages)
        and _unique([b["seq"] for b in blocks if "seq" in b])
        and _unique([b["id"] for b in blocks if b.get("id")])
        and not _items(body, "compactions")
        and _view_start_in_range(body, blocks)
        and not any(_is_message_block(b) for b in blocks)
    )


def _view_start_in_range(body: dict, blocks: list[dict]) -> bool:
    start = body.get("view_start_seq")
    if not isinstance(start, int):
        return True
    seqs = [b["seq"] for b in blocks if isinstance(b.get("seq"), int)]
    return start <= max(seqs, default=0) + 1


def _is_message_block(block: dict) -> bool:
    meta = block.get("meta")
    return str(block.get("type", "")).startswith("message.") or (
        isinstance(meta, dict) and "openai_message" in meta
    )


schema = load_schema(allow_x00=False)
schema_with_nul = load_schema(allow_x00=True).include(method=list(WRITES))
QUIET = hypothesis_settings(
    deadline=None, suppress_health_check=list(HealthCheck), derandomize=True, database=None
)


@pytest.fixture
def auth(db, monkeypatch) -> Iterator[dict[str, str]]:
    """A tenant with the conversation every path addresses; compact is not throttled here."""
    # Like Django's test client: the test's transaction stays open across the WSGI requests.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    monkeypatch.setattr(ScopedRateThrottle, "THROTTLE_RATES", {"compact": "100000/min"})
    key, raw = api_key_create(tenant_name="fuzz")
    conversation_create(tenant=key.tenant, public_id=CONV, title="fuzzed")
    yield {"Authorization": f"Bearer {raw}"}
    assert_every_conversation_still_reads(key.tenant, raw)
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


def assert_every_conversation_still_reads(tenant: Tenant, raw_key: str) -> None:
    """No fuzzed request may leave a row that breaks a later read: every conversation the run
    touched still answers GET, render and export, in every context."""
    client = Client(HTTP_AUTHORIZATION=f"Bearer {raw_key}")
    for conversation in Conversation.objects.filter(tenant=tenant):
        base = f"/api/v1/conversations/{conversation.public_id}"
        assert client.get(f"{base}/").status_code == 200, conversation.public_id
        for name in conversation.timelines.values_list("name", flat=True):
            context = f"{base}/contexts/{name}"
            rendered = client.post(f"{context}/render/", {}, content_type="application/json")
            assert rendered.status_code == 200, (conversation.public_id, name, rendered.content[:500])
            exported = client.get(f"{context}/timeline/")
            assert exported.status_code == 200, (conversation.public_id, name)
            assert json.loads(b"".join(exported.streaming_content))["context"] == name  # streamed whole


def searchable(case) -> bool:
    """A search needs a word that must occur (the rule in the `q` description, selectors.blocks)."""
    if not case.path.endswith("/search/") or not isinstance((case.query or {}).get("q"), str):
        return True
    if connection.vendor != "postgresql":
        return True
    from timeline_app.errors import InvalidInput
    from timeline_app.selectors.blocks import _check_tsquery

    try:
        _check_tsquery(case.query["q"])
    except InvalidInput:
        return False
    return True


def _settings_of(body) -> dict:
    settings = body.get("settings") if isinstance(body, dict) else None
    return settings if isinstance(settings, dict) else {}


def summary_model_allowed(case) -> bool:
    """A conversation's ``summary_model`` must suit the configured summarizer (the rule in the
    setting's description; none under the extractive one): not a shape a schema can state."""
    model = _settings_of(case.body).get("summary_model")
    return not isinstance(model, str) or summary_model_problem(model) is None


def settings_consistent(case) -> bool:
    """``keep_recent_tokens`` is at most the ``max_tokens`` it comes with (issue 30; the rule in
    the setting's description): a rule across two keys, which a schema cannot state."""
    settings = _settings_of(case.body)
    keep = settings.get("keep_recent_tokens")
    limit = settings.get("max_tokens", RenderSettings.max_tokens)
    return not (isinstance(keep, int) and isinstance(limit, int) and keep > limit)


def usage_readable(case) -> bool:
    """A usage report's ``usage`` is one of the providers' usage objects (Anthropic's or
    OpenAI's, read by ``rendering.usage.reported.read_usage``), which the schema leaves open."""
    if not case.path.endswith("/usage/") or case.method.upper() != "POST" or not isinstance(case.body, dict):
        return True
    try:
        read_usage(case.body.get("usage"))
    except UsageError:
        return False
    return True


def reply_readable(case) -> bool:
    """A reply is one of the providers' replies, read by ``rendering.native.replies.parse_reply``
    into blocks of a valid shape (its thinking's, its meta's size): which the schema leaves open.
    A tool result must answer a stored call, which no schema can state (a 400 naming the id)."""
    if case.method.upper() != "POST" or not isinstance(case.body, dict):
        return True
    if case.path.endswith("/tool-results/"):
        return False
    if not case.path.endswith("/replies/"):
        return True
    try:
        reply = parse_reply(case.body.get("response") or {}, declared=case.body.get("tools") or [])
    except ReplyError:
        return False
    if case.body.get("render_id"):
        model = case.body.get("model") or reply.model
        if reply.usage is None or not 1 <= len(model) <= 100:
            return False
        try:
            read_usage(reply.usage)
        except UsageError:
            return False
    return not any(
        thinking_block_problems(type=nb.type, author=nb.author, text=nb.text, meta=nb.meta, has_data=False)
        or meta_problem(nb.meta, meta_limits())
        for nb in reply.blocks
    )


def within_the_rules(case) -> bool:
    return (
        inside_the_schema(case.body)
        and searchable(case)
        and blocks_query_consistent(case)
        and summary_model_allowed(case)
        and settings_consistent(case)
        and usage_readable(case)
        and reply_readable(case)
        and operations_query_readable(case)
    )


def operations_query_readable(case) -> bool:
    """``GET …/operations/``: known kinds (one or a comma list each), and ``since`` / ``until``
    times in range (epoch seconds 2000-2100, a real date), ``since`` before ``until``; the schema's
    pattern alone allows 820 or month 76."""
    if not case.path.endswith("/operations/") or case.method.upper() != "GET":
        return True
    from rest_framework import serializers

    from timeline_app.api.usage import RangeTimeField
    from timeline_app.domain.operations import UnknownKinds, parse_kinds

    query = case.query or {}
    kinds = query.get("kind", [])
    try:
        parse_kinds(kinds if isinstance(kinds, list) else [kinds])
    except UnknownKinds:
        return False
    try:
        bounds = {
            name: RangeTimeField().to_internal_value(query[name])
            for name in ("since", "until")
            if name in query
        }
    except serializers.ValidationError:
        return False
    return not ("since" in bounds and "until" in bounds and bounds["since"] >= bounds["until"])


LIST_PARAMS = {"type", "turn_id", "hidden", "since_seq", "cursor", "limit"}


def blocks_query_consistent(case) -> bool:
    """``GET …/blocks/`` reads by ``path`` or lists: a list parameter with ``path``, or
    ``include_hidden`` without it, is a 400 (the rule in the operation's description)."""
    if not case.path.endswith("/blocks/") or case.method.upper() != "GET":
        return True
    query = case.query or {}
    if "path" in query:
        return not LIST_PARAMS & set(query)
    return "include_hidden" not in query


@schema.parametrize()
@QUIET
def test_every_operation_conforms_to_the_schema(case, auth):
    if not within_the_rules(case):
        return  # a 400 is right (the NUL run below covers NULs)
    case.call_and_validate(headers=auth)


@schema_with_nul.parametrize()
@QUIET
def test_nul_characters_on_write_endpoints_are_a_clean_4xx(case, auth):
    # A NUL is valid JSON the service refuses (PostgreSQL cannot store it): a 400, never a 500.
    case.call_and_validate(headers=auth, excluded_checks=[positive_data_acceptance])


# The stateful phase: chains follow the OpenAPI links the schema declares (a created conversation
# or context is what the next calls address), so this schema has no fixed `conv`.
def test_stateful_chains_along_the_declared_links(auth):
    config = SchemathesisConfig.from_dict(
        {
            "headers": auth,
            "generation": {"mode": "positive", "allow-x00": False},
            "phases": {"coverage": {"enabled": False}},
            # DELETE …/messages/ clears the context's view (DESIGN §5): the list stays, empty.
            "checks": {"use_after_free": {"enabled": False}},
        }
    )
    stateful = schemathesis.openapi.from_wsgi(
        "/api/schema/?format=json", get_wsgi_application(), config=config
    )

    class WithinTheRules(stateful.as_state_machine()):  # type: ignore[misc]
        def validate_response(self, response, case, additional_checks=None, **kwargs):
            if within_the_rules(case):
                super().validate_response(response, case, additional_checks, **kwargs)

    WithinTheRules.run(
        settings=hypothesis_settings(
            max_examples=max(5, MAX_EXAMPLES // 5),
            stateful_step_count=6,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            derandomize=True,
            database=None,
        )
    )
