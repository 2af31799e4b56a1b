"""The usage forecast: the providers' documented prompt-cache rules applied to a request sequence."""

from datetime import UTC, datetime, timedelta
from hashlib import sha256

import pytest

from timeline_app.rendering.usage.forecast import (
    ONE_HOUR,
    CacheBlock,
    CacheRequest,
    CacheRules,
    CacheState,
    forecast_usage,
    replay,
)

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
RULES = CacheRules()


def blocks(texts, tokens_each=100, marks=(), ttl=300):
    """Blocks with cumulative digests of ``texts``; ``marks`` the indices carrying a breakpoint."""
    out, digest, total = [], b"", 0
    for i, text in enumerate(texts):
        digest = sha256(digest + text.encode()).digest()[:8]
        total += tokens_each
        out.append(CacheBlock(digest, total, ttl if i in marks else None))
    return out


def request(texts, *, marks, tail=0, model="claude-sonnet-4-5", provider="anthropic", **kw):
    bs = blocks(texts, marks=marks, **kw)
    return CacheRequest(provider=provider, model=model, blocks=bs, input_tokens=bs[-1].tokens + tail)


def test_the_first_request_writes_up_to_its_last_breakpoint_and_the_rest_is_uncached():
    (forecast,) = replay([(T0, request([f"b{i}" for i in range(20)], marks={9, 14}, tail=50))], rules=RULES)
    assert forecast.cache_read_input_tokens == 0
    assert forecast.cache_write_5m_input_tokens == 1500
    assert forecast.uncached_input_tokens == 550
    assert forecast.input_tokens == 2050 and not forecast.hit


def test_an_appended_request_reads_the_previous_prefix_and_writes_only_the_new_part():
    texts = [f"b{i}" for i in range(20)]
    first = request(texts, marks={19})
    second = request([*texts, "b20", "b21"], marks={21}, tail=10)
    _, forecast = replay([(T0, first), (T0 + timedelta(minutes=4), second)], rules=RULES)
    assert forecast.cache_read_input_tokens == 2000
    assert forecast.cache_write_5m_input_tokens == 200
    assert forecast.uncached_input_tokens == 10


def test_a_hit_refreshes_the_entry_so_a_steady_agent_stays_warm_past_the_ttl():
    texts = [f"b{i}" for i in range(20)]
    steps = [(T0 + timedelta(minutes=4 * k), request(texts, marks={19})) for k in range(4)]
    forecasts = replay(steps, rules=RULES)
    assert [f.cache_read_input_tokens for f in forecasts] == [0, 2000, 2000, 2000]


def test_after_the_ttl_nothing_is_read():
    texts = [f"b{i}" for i in range(20)]
    _, late = replay(
        [
            (T0, request(texts, marks={19})),
            (T0 + timedelta(minutes=5, seconds=1), request(texts, marks={19})),
        ],
        rules=RULES,
    )
    assert late.cache_read_input_tokens == 0 and late.cache_write_5m_input_tokens == 2000


def test_a_one_hour_breakpoint_outlives_five_minutes_and_is_billed_as_a_one_hour_write():
    texts = [f"b{i}" for i in range(20)]
    first, later = replay(
        [
            (T0, request(texts, marks={19}, ttl=ONE_HOUR)),
            (T0 + timedelta(minutes=50), request(texts, marks={19}, ttl=ONE_HOUR)),
        ],
        rules=RULES,
    )
    assert (first.cache_write_1h_input_tokens, first.cache_write_5m_input_tokens) == (2000, 0)
    assert later.cache_read_input_tokens == 2000


def test_the_lookback_finds_the_previous_breakpoint_only_within_twenty_blocks():
    texts = [f"b{i}" for i in range(30)]
    first = request(texts[:10], marks={9}, tokens_each=200)
    near = request(texts[:30], marks={29}, tokens_each=200)  # 20 blocks after the entry at 9
    far = request([*texts, "b30"], marks={30}, tokens_each=200)  # 21 blocks after it
    assert (
        replay([(T0, first), (T0 + timedelta(minutes=1), near)], rules=RULES)[1].cache_read_input_tokens
        == 2000
    )
    assert (
        replay([(T0, first), (T0 + timedelta(minutes=1), far)], rules=RULES)[1].cache_read_input_tokens == 0
    )


def test_below_the_models_minimum_nothing_is_cached():
    texts = [f"b{i}" for i in range(10)]  # 1,000 tokens
    sonnet = [(T0, request(texts, marks={9})), (T0 + timedelta(minutes=1), request(texts, marks={9}))]
    assert replay(sonnet, rules=RULES)[1].cache_read_input_tokens == 0
    assert (
        replay(sonnet, rules=CacheRules(anthropic_default_min_tokens=1024))[0].cache_write_5m_input_tokens
        == 0
    )
    small = CacheRules(anthropic_min_tokens={"claude-sonnet-4-5": 512})
    assert replay(sonnet, rules=small)[1].cache_read_input_tokens == 1000


def test_a_dated_model_name_takes_its_familys_minimum():
    assert RULES.min_tokens("claude-haiku-4-5-20251001") == 4096
    assert RULES.min_tokens("claude-sonnet-4-5-20250929") == 1024
    assert RULES.min_tokens("claude-sonnet-4-6") == 2048
    assert RULES.min_tokens("someone-elses-model") == 1024


def test_a_changed_early_block_misses_everything_after_it():
    texts = [f"b{i}" for i in range(20)]
    edited = ["B0", *texts[1:]]
    _, forecast = replay(
        [(T0, request(texts, marks={19})), (T0 + timedelta(minutes=1), request(edited, marks={19}))],
        rules=RULES,
    )
    assert forecast.cache_read_input_tokens == 0


def test_more_than_four_breakpoints_is_refused_like_the_provider_refuses_it():
    with pytest.raises(ValueError):
        forecast_usage(
            request=request([f"b{i}" for i in range(20)], marks={1, 3, 5, 7, 9}),
            state=CacheState(),
            now=T0,
            rules=RULES,
        )


def test_openai_caches_from_1024_tokens_in_128_token_steps():
    texts = [f"b{i}" for i in range(20)]
    first = request(texts, marks=(), provider="openai", model="gpt-4.1", tokens_each=70)  # 1,400
    second = request([*texts, "x"], marks=(), provider="openai", model="gpt-4.1", tokens_each=70)
    forecasts = replay([(T0, first), (T0 + timedelta(minutes=2), second)], rules=RULES)
    assert forecasts[0].cache_read_input_tokens == 0
    assert forecasts[1].cache_read_input_tokens == 1024 + 2 * 128  # 1,400 shared → 1,280
    assert forecasts[1].uncached_input_tokens == 1470 - 1280
    assert forecasts[1].cache_creation_input_tokens == 0


def test_openai_caches_nothing_under_1024_tokens_or_after_the_retention():
    texts = [f"b{i}" for i in range(10)]
    short = request(texts, marks=(), provider="openai", tokens_each=100)  # 1,000
    assert (
        replay([(T0, short), (T0 + timedelta(minutes=1), short)], rules=RULES)[1].cache_read_input_tokens == 0
    )
    long = request([*texts, "b10"], marks=(), provider="openai", tokens_each=100)
    late = replay([(T0, long), (T0 + timedelta(minutes=6), long)], rules=RULES)[1]
    assert late.cache_read_input_tokens == 0


def test_one_providers_requests_do_not_warm_the_others_cache():
    texts = [f"b{i}" for i in range(20)]
    steps = [
        (T0, request(texts, marks={19})),
        (T0 + timedelta(minutes=1), request(texts, marks=(), provider="openai")),
    ]
    assert replay(steps, rules=RULES)[1].cache_read_input_tokens == 0


# ---------------------------------------------------------------- OpenAI GPT-5.6 explicit breakpoints

THIRTY = 1800


def explicit(texts, *, marks, ttl=THIRTY, tail=0, tokens_each=600):
    bs = blocks(texts, tokens_each=tokens_each, marks=marks, ttl=ttl)
    return CacheRequest(
        provider="openai", model="gpt-5.6-sol", blocks=bs, input_tokens=bs[-1].tokens + tail, explicit=True
    )


def test_gpt_56_reads_only_at_a_breakpoint_the_request_repeats():
    texts = [f"b{i}" for i in range(6)]
    first = explicit(texts[:4], marks={3})
    repeated = explicit(texts, marks={3, 5})
    moved = explicit(texts, marks={5})  # the old breakpoint not repeated: no lookback, no fallback
    _, hit = replay([(T0, first), (T0 + timedelta(minutes=10), repeated)], rules=RULES)
    _, miss = replay([(T0, first), (T0 + timedelta(minutes=10), moved)], rules=RULES)
    assert (hit.cache_read_input_tokens, hit.cache_write_5m_input_tokens) == (2400, 1200)
    assert (miss.cache_read_input_tokens, miss.cache_write_5m_input_tokens) == (0, 3600)
    assert hit.as_dict()["cache_write_tokens_details"] == {"ttl_30m_tokens": 1200, "ttl_12h_tokens": 0}


def test_gpt_56_writes_only_the_latest_four_breakpoints_and_entries_live_thirty_minutes():
    texts = [f"b{i}" for i in range(8)]
    (first,) = replay([(T0, explicit(texts, marks={1, 2, 3, 4, 5, 6}))], rules=RULES)
    assert first.cache_write_5m_input_tokens == 7 * 600  # up to the last breakpoint
    assert len(first.touched) == 4  # blocks 3..6: the first two are carried, not written
    state = CacheState()
    for digest, expires in first.touched:
        state.touch(digest, expires)
    unwritten = explicit(texts[:3], marks={2})
    later = forecast_usage(request=unwritten, state=state, now=T0 + timedelta(minutes=1), rules=RULES)
    assert not later.hit
    written = explicit(texts[:4], marks={3})
    assert forecast_usage(request=written, state=state, now=T0 + timedelta(minutes=29), rules=RULES).hit
    assert not forecast_usage(request=written, state=state, now=T0 + timedelta(minutes=30), rules=RULES).hit


def test_gpt_56_looks_up_the_latest_80_breakpoints_only():
    texts = [f"b{i}" for i in range(90)]
    state = CacheState()
    (first,) = replay([(T0, explicit(texts[:2], marks={1}))], rules=RULES)
    for digest, expires in first.touched:
        state.touch(digest, expires)
    within = explicit(texts[:81], marks=set(range(1, 81)))  # 80 breakpoints: block 1's among them
    beyond = explicit(texts[:82], marks=set(range(1, 82)))  # 81: block 1's is not looked up
    now = T0 + timedelta(minutes=1)
    assert forecast_usage(request=within, state=state, now=now, rules=RULES).cache_read_input_tokens == 1200
    assert not forecast_usage(request=beyond, state=state, now=now, rules=RULES).hit


def test_gpt_56_twelve_hour_writes_are_their_own_share():
    texts = [f"b{i}" for i in range(4)]
    twelve = 43_200
    (forecast,) = replay([(T0, explicit(texts, marks={1, 3}, ttl=twelve, tail=100))], rules=RULES)
    assert (forecast.cache_write_1h_input_tokens, forecast.cache_write_5m_input_tokens) == (2400, 0)
    assert forecast.uncached_input_tokens == 100
    _, again = replay(
        [
            (T0, explicit(texts, marks={3}, ttl=twelve)),
            (T0 + timedelta(hours=11), explicit(texts, marks={3})),
        ],
        rules=RULES,
    )
    assert again.cache_read_input_tokens == 2400


def test_gpt_56_without_a_breakpoint_caches_nothing_and_short_prefixes_are_not_written():
    texts = [f"b{i}" for i in range(4)]
    (none,) = replay([(T0, explicit(texts, marks=set()))], rules=RULES)
    assert (none.cache_read_input_tokens, none.cache_creation_input_tokens) == (0, 0)
    (short,) = replay([(T0, explicit(texts, marks={0}, tokens_each=100))], rules=RULES)
    assert short.cache_creation_input_tokens == 0  # 100 tokens < 1,024
