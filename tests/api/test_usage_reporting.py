"""Cost through HTTP: a render's ``render_id`` and ``usage_forecast``, the usage a client reports
for it (SDK shapes, idempotent, validated, tenant-scoped), and the totals."""

import json
from decimal import Decimal

import pytest
from anthropic.types import CacheCreation, Usage
from openai.types import CompletionUsage
from openai.types.completion_usage import PromptTokensDetails

from tests.factories import add_turns
from timeline_app.models import RenderRecord, RenderUsage
from timeline_app.services.conversations import conversation_create

pytestmark = pytest.mark.django_db
BASE = "/api/v1/conversations/c1"
T0 = "2026-03-01T12:00:00Z"
T1 = "2026-03-01T12:02:00Z"


def anthropic_usage(*, uncached=1_200, read=40_000, five=2_000, hour=1_000, output=850):
    return Usage(
        input_tokens=uncached,
        output_tokens=output,
        cache_creation_input_tokens=five + hour,
        cache_read_input_tokens=read,
        cache_creation=CacheCreation(ephemeral_5m_input_tokens=five, ephemeral_1h_input_tokens=hour),
    ).model_dump(mode="json")


def render(caller, base=BASE, now=T0, **body):
    response = caller.post(f"{base}/render/", {"now": now, **body})
    assert response.status_code == 200, response.content
    return response.json()


def report(caller, render_id, base=BASE, **body):
    return caller.post(f"{base}/renders/{render_id}/usage/", body)


@pytest.fixture
def warm(owner, conversation):
    add_turns(conversation.timelines.get(), 6, result_words=400)
    return conversation


def test_every_render_answers_a_render_id_and_a_forecast_that_warms_up(owner, warm):
    first = render(owner, system_tokens=2_000, model="claude-sonnet-4-5")
    second = render(owner, now=T1, system_tokens=2_000, model="claude-sonnet-4-5")
    assert first["render_id"].startswith("rnd_") and first["render_id"] != second["render_id"]
    assert RenderRecord.objects.filter(public_id=second["render_id"]).exists()
    cold, hot = first["usage_forecast"], second["usage_forecast"]
    assert cold["provider"] == "anthropic" and cold["model"] == "claude-sonnet-4-5"
    assert cold["input_tokens"] == first["tokens"]["total"]
    assert cold["cache_read_input_tokens"] == 0 and cold["cache_creation_input_tokens"] > 0
    assert not cold["hit"] and hot["hit"]
    # The same prefix again: what the first wrote is read, nothing new is written.
    assert hot["cache_read_input_tokens"] == cold["cache_creation_input_tokens"]
    assert hot["cache_creation_input_tokens"] == 0
    parts = (hot["cache_read_input_tokens"], hot["cache_creation_input_tokens"], hot["uncached_input_tokens"])
    assert sum(parts) == hot["input_tokens"]


@pytest.mark.parametrize("fmt", ["openai", "text"])
def test_the_other_formats_answer_a_render_id_and_a_forecast_too(owner, warm, fmt):
    body = render(owner, format=fmt)
    assert body["render_id"].startswith("rnd_")
    assert body["usage_forecast"]["provider"] == ("openai" if fmt == "openai" else "anthropic")


def test_anthropic_usage_is_stored_beside_the_forecast_and_priced_to_the_cent(owner, warm):
    render_id = render(owner, system_tokens=2_000)["render_id"]
    response = report(owner, render_id, usage=anthropic_usage(), model="claude-sonnet-4-5-20250929")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["render_id"] == render_id and body["priced_model"] == "claude-sonnet-4-5"
    assert body["tokens"] == {
        "uncached_input": 1_200,
        "cache_read": 40_000,
        "cache_write_5m": 2_000,
        "cache_write_1h": 1_000,
        "output": 850,
    }
    # By hand ($3 in, $3.75 / $6 writes, $0.30 read, $15 out per million):
    # 1,200×3 + 40,000×0.3 + 2,000×3.75 + 1,000×6 + 850×15 = 41,850 → $0.04185
    assert body["cost_usd"] == "0.04185"
    assert body["cost_without_cache_usd"] == "0.14535"  # 44,200×3 + 850×15
    assert body["forecast"]["cache_read"] == 0  # first render: the forecast promised no read
    assert body["unexplained_miss"] is False


def test_reporting_again_is_idempotent_and_other_figures_are_a_conflict(owner, warm):
    render_id = render(owner)["render_id"]
    usage = anthropic_usage()
    assert report(owner, render_id, usage=usage, model="claude-sonnet-4-5").status_code == 201
    again = report(owner, render_id, usage=usage, model="claude-sonnet-4-5")
    assert again.status_code == 200 and again.json()["cost_usd"] == "0.04185"
    other = report(owner, render_id, usage=anthropic_usage(output=1), model="claude-sonnet-4-5")
    assert other.status_code == 409 and other.json()["error"]["code"] == "conflict"
    assert RenderUsage.objects.count() == 1


def test_extra_sdk_keys_are_neither_stored_nor_compared(owner, warm):
    """Issue 30, defect 1: the stored report keeps what the cost model reads (a few hundred
    bytes), whatever else the usage object carried; a replay with other extra keys is the same
    report."""
    render_id = render(owner)["render_id"]
    usage = anthropic_usage()
    junk = {f"junk_{n}": "x" * 40 for n in range(500)}  # 25 KB of keys no cost rule reads
    first = report(owner, render_id, usage={**usage, **junk}, model="claude-sonnet-4-5")
    assert first.status_code == 201, first.content
    stored = RenderUsage.objects.get().reported
    assert len(json.dumps(stored)) < 400, stored
    assert stored["usage"]["cache_creation"] == usage["cache_creation"]
    again = report(owner, render_id, usage={**usage, "service_tier": "priority"}, model="claude-sonnet-4-5")
    assert again.status_code == 200 and again.json() == first.json()


@pytest.mark.parametrize(
    "body",
    [
        {"usage": {"input_tokens": "many"}, "model": "claude-sonnet-4-5"},
        {
            "usage": {
                "input_tokens": 5,
                "cache_creation_input_tokens": 3,
                "cache_creation": {"ephemeral_1h_input_tokens": 1},
            },
            "model": "claude-sonnet-4-5",
        },
        {"usage": {"foo": 1}, "model": "claude-sonnet-4-5"},
        {"usage": [], "model": "claude-sonnet-4-5"},
        {"usage": {"input_tokens": 5}},
        {"usage": {"input_tokens": 5}, "model": "claude-sonnet-4-5", "cache_miss_reason": "bad luck"},
        {"usage": {"input_tokens": 5}, "model": "claude-sonnet-4-5", "extra": 1},
        {"usage": {"prompt_tokens": 5}, "model": "claude-sonnet-4-5"},  # an OpenAI usage for a Claude model
    ],
)
def test_a_malformed_report_is_a_400_and_stores_nothing(owner, warm, body):
    render_id = render(owner)["render_id"]
    response = report(owner, render_id, **body)
    assert response.status_code == 400, response.content
    assert set(response.json()["error"]) == {"code", "message", "details"}
    assert not RenderUsage.objects.exists()


def test_another_tenants_render_id_is_a_404(owner, outsider, warm):
    # The outsider has a conversation with the same public id and a render of its own.
    theirs = conversation_create(tenant=outsider.tenant, public_id="c1", title="Theirs")
    add_turns(theirs.timelines.get(), 2)
    their_render = render(outsider)["render_id"]
    mine = render(owner)["render_id"]
    response = report(owner, their_render, usage=anthropic_usage(), model="claude-sonnet-4-5")
    assert response.status_code == 404
    assert report(outsider, mine, usage=anthropic_usage(), model="claude-sonnet-4-5").status_code == 404
    assert not RenderUsage.objects.exists()
    # Nor does another context of the same conversation accept it.
    owner.post(f"{BASE}/contexts/attempt_a/messages/", {"messages": [{"role": "user", "content": "hi"}]})
    other_context = report(
        owner, mine, base=f"{BASE}/contexts/attempt_a", usage=anthropic_usage(), model="claude-sonnet-4-5"
    )
    assert other_context.status_code == 404


def test_a_promised_read_the_provider_did_not_give_is_an_unexplained_miss(owner, warm):
    render(owner, system_tokens=2_000)
    hot = render(owner, now=T1, system_tokens=2_000)
    promised = hot["usage_forecast"]["cache_read_input_tokens"]
    assert promised > 0
    missed = anthropic_usage(uncached=100, read=0, five=promised, hour=0)
    body = report(
        owner, hot["render_id"], usage=missed, model="claude-sonnet-4-5", cache_miss_reason="system_changed"
    ).json()
    assert body["unexplained_miss"] is True and body["cache_miss_reason"] == "system_changed"
    totals = owner.get(f"{BASE}/usage/").json()
    assert totals["unexplained_misses"] == 1
    assert totals["misses"][0]["render_id"] == hot["render_id"]
    assert totals["misses"][0]["forecast_read_tokens"] == promised


def test_conversation_totals_add_up_every_context_and_a_context_its_own(owner, outsider, warm):
    first = render(owner)["render_id"]
    second = render(owner, now=T1)["render_id"]
    report(owner, first, usage=anthropic_usage(), model="claude-sonnet-4-5")
    report(owner, second, usage=anthropic_usage(read=0, uncached=41_200), model="claude-sonnet-4-5")
    owner.post(f"{BASE}/contexts/attempt_a/messages/", {"messages": [{"role": "user", "content": "hi"}]})
    side = render(owner, base=f"{BASE}/contexts/attempt_a", format="openai")["render_id"]
    chat = CompletionUsage(
        prompt_tokens=5_000,
        completion_tokens=300,
        total_tokens=5_300,
        prompt_tokens_details=PromptTokensDetails(cached_tokens=3_840),
    ).model_dump(mode="json")
    assert (
        report(owner, side, base=f"{BASE}/contexts/attempt_a", usage=chat, model="gpt-4.1").status_code == 201
    )
    # Planted: the outsider's c1 with usage of its own.
    theirs = conversation_create(tenant=outsider.tenant, public_id="c1")
    add_turns(theirs.timelines.get(), 2)
    report(outsider, render(outsider)["render_id"], usage=anthropic_usage(), model="claude-sonnet-4-5")

    totals = owner.get(f"{BASE}/usage/").json()
    assert totals["renders"] == 3
    # 0.04185 + (41,200×3 + 2,000×3.75 + 1,000×6 + 850×15 = 149,850 → 0.14985) + 0.00664
    assert Decimal(totals["cost_usd"]) == Decimal("0.04185") + Decimal("0.14985") + Decimal("0.00664")
    assert Decimal(totals["saved_usd"]) == Decimal(totals["cost_without_cache_usd"]) - Decimal(
        totals["cost_usd"]
    )
    assert totals["tokens"]["cache_read"] == 43_840
    assert totals["cache_read_share"] == round(43_840 / (44_200 * 2 + 5_000), 4)
    side_totals = owner.get(f"{BASE}/contexts/attempt_a/usage/").json()
    assert side_totals["renders"] == 1 and side_totals["cost_usd"] == "0.00664"


def test_an_unknown_model_is_stored_without_a_price(owner, warm):
    render_id = render(owner)["render_id"]
    body = report(owner, render_id, usage=anthropic_usage(), model="claude-next-9").json()
    assert body["priced_model"] == "" and body["cost_usd"] is None
    assert owner.get(f"{BASE}/usage/").json()["unpriced_renders"] == 1


def test_the_tenants_usage_lists_its_conversations_in_the_range_only(owner, outsider, warm):
    report(owner, render(owner)["render_id"], usage=anthropic_usage(), model="claude-sonnet-4-5")
    report(
        owner,
        render(owner, now="2026-04-01T00:00:00Z")["render_id"],
        usage=anthropic_usage(),
        model="claude-sonnet-4-5",
    )
    conversation_create(tenant=owner.tenant, public_id="c2")  # no usage: not listed
    theirs = conversation_create(tenant=outsider.tenant, public_id="c9")
    add_turns(theirs.timelines.get(), 2)
    report(
        outsider,
        render(outsider, base="/api/v1/conversations/c9")["render_id"],
        base="/api/v1/conversations/c9",
        usage=anthropic_usage(),
        model="claude-sonnet-4-5",
    )

    everything = owner.get("/api/v1/usage/").json()
    assert [row["id"] for row in everything["results"]] == ["c1"]
    assert everything["results"][0]["renders"] == 2 and everything["next"] is None
    march = owner.get("/api/v1/usage/", since="2026-03-01T00:00:00Z", until="2026-03-31T00:00:00Z").json()
    assert march["results"][0]["renders"] == 1 and march["results"][0]["cost_usd"] == "0.04185"
    assert owner.get("/api/v1/usage/", since="2026-05-01T00:00:00Z").json()["results"] == []
    bad = owner.get("/api/v1/usage/", since="yesterday")
    assert bad.status_code == 400 and "error" in bad.json()
    assert owner.get("/api/v1/usage/", since=T1, until=T0).status_code == 400


def test_a_gemini_render_forecasts_implicit_caching_and_its_usage_metadata_is_priced(owner, warm):
    from google.genai import types as genai_types

    first = render(owner, format="gemini_contents", system_tokens=2_000, model="gemini-2.5-flash")
    second = render(owner, now=T1, format="gemini_contents", system_tokens=2_000, model="gemini-2.5-flash")
    assert first["usage_forecast"]["provider"] == "google" and not first["usage_forecast"]["hit"]
    forecast = second["usage_forecast"]
    assert forecast["hit"] and forecast["cache_creation_input_tokens"] == 0
    metadata = genai_types.GenerateContentResponseUsageMetadata(
        prompt_token_count=forecast["input_tokens"],
        cached_content_token_count=forecast["cache_read_input_tokens"],
        candidates_token_count=100,
        thoughts_token_count=50,
    ).model_dump(mode="json", exclude_none=True)
    answer = report(owner, second["render_id"], usage=metadata, model="gemini-2.5-flash")
    assert answer.status_code == 201, answer.content
    row = RenderUsage.objects.get(render_public_id=second["render_id"])
    assert row.provider == "google" and row.priced_model == "gemini-2.5-flash"
    assert row.cache_read_tokens == forecast["cache_read_input_tokens"] and row.output_tokens == 150
    assert row.cache_write_5m_tokens == 0 and row.forecast_agreed and not row.unexplained_miss
    uncached = forecast["input_tokens"] - forecast["cache_read_input_tokens"]
    expected = (
        uncached * Decimal("0.30") + row.cache_read_tokens * Decimal("0.030") + 150 * Decimal("2.50")
    ) / 1_000_000
    assert row.cost_usd == expected


@pytest.mark.parametrize(
    "since",
    [
        "11111111111111111111",  # 20 digits: Python's fromisoformat reads the year 1111
        "4102444801",  # epoch seconds past 2100-01-01
        "-1",
        "2026-13-01",
        "0000-01-01",
        "0001-01-01T00:00:00+14:00",  # before year 1 in UTC
        "946684799",  # epoch seconds before 2000-01-01
        "20260301",  # a basic ISO date is no epoch time of 1970 either
        "2026-03-01T12",
        "yesterday",
    ],
)
def test_the_tenants_usage_refuses_what_is_no_iso_time_or_bounded_epoch(owner, warm, since):
    """Issue 30, defect 6."""
    response = owner.get("/api/v1/usage/", since=since)
    assert response.status_code == 400, response.content
    assert set(response.json()["error"]["details"]) == {"since"}


@pytest.mark.parametrize(
    ("since", "until", "renders"),
    [
        ("2026-03-01", "2026-03-02", 1),  # dates: midnight UTC
        ("2026-03-01T12:00:00Z", "2026-03-01T12:00:01Z", 1),  # the render at T0, [since, until)
        ("2026-03-01T13:00:00+01:00", "2026-03-01T12:00:01", 1),  # an offset; none: UTC
        (str(1772366400), str(1772366401), 1),  # epoch seconds of T0
        ("2026-03-01T12:00:01Z", "2026-03-02", 0),
        ("946684800", "4102444800", 1),  # the epoch bounds
    ],
)
def test_the_tenants_usage_reads_iso_dates_times_and_epoch_seconds(owner, warm, since, until, renders):
    report(owner, render(owner)["render_id"], usage=anthropic_usage(), model="claude-sonnet-4-5")
    response = owner.get("/api/v1/usage/", since=since, until=until)
    assert response.status_code == 200, response.content
    assert [row["renders"] for row in response.json()["results"]] == ([renders] if renders else [])
