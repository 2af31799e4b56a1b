"""A conversation's ``settings`` object, validated exactly (rendering.settings.validate_overrides):
each key's type and inclusive range, every problem reported at once, the value normalised."""

from __future__ import annotations

import pytest

from timeline_app.domain.settings import SETTING_RANGES, SettingsError, resolve_stored, validate_overrides


def problems(overrides) -> dict[str, str]:
    with pytest.raises(SettingsError) as caught:
        validate_overrides(overrides)
    return caught.value.details


@pytest.mark.parametrize("overrides", [None, [], "max_tokens=1000", 3])
def test_settings_must_be_an_object(overrides) -> None:
    assert problems(overrides) == {"settings": "must be an object"}


def test_an_empty_object_is_no_override() -> None:
    assert validate_overrides({}) == {}


@pytest.mark.parametrize(("key", "bounds"), sorted(SETTING_RANGES.items()))
def test_each_range_is_inclusive_at_both_ends(key: str, bounds: tuple[float, float]) -> None:
    low, high = bounds
    if key == "threshold":
        assert validate_overrides({key: low}) == {key: low}
        assert validate_overrides({key: high}) == {key: high}
        outside = (low - 0.01, high + 0.01)
    else:
        # keep_recent_tokens up to its top needs a max_tokens as large (issue 30, defect 6).
        room = {"max_tokens": 10_000_000} if key == "keep_recent_tokens" else {}
        assert validate_overrides({key: int(low), **room}) == {key: int(low), **room}
        assert validate_overrides({key: int(high), **room}) == {key: int(high), **room}
        outside = (int(low) - 1, int(high) + 1)
    for value in outside:
        assert problems({key: value}) == {key: f"must be between {low:g} and {high:g}"}


@pytest.mark.parametrize(
    ("overrides", "accepted"),
    [
        ({"max_tokens": 10_000, "keep_recent_tokens": 10_000}, True),
        ({"max_tokens": 10_000, "keep_recent_tokens": 10_001}, False),
        ({"keep_recent_tokens": 200_000}, True),  # the default max_tokens
        ({"keep_recent_tokens": 200_001}, False),
        ({"max_tokens": 1_000, "keep_recent_tokens": None}, True),
    ],
)
def test_keep_recent_tokens_is_at_most_the_max_tokens_it_comes_with(overrides, accepted) -> None:
    """Issue 30, defect 6: more recent tokens kept than the context holds is a 400."""
    if accepted:
        assert validate_overrides(overrides) == overrides
    else:
        assert set(problems(overrides)) == {"keep_recent_tokens"}


def test_a_stored_keep_recent_tokens_over_max_tokens_applies_clamped() -> None:
    """Stored before the rule (or a render's own lower max_tokens): each key still applies, and
    what a compaction keeps is clamped to max_tokens."""
    settings, ignored = resolve_stored({"max_tokens": 10_000, "keep_recent_tokens": 50_000})
    assert ignored == {}
    assert settings.effective_keep_recent_tokens == 10_000
    per_call, _ = resolve_stored({"keep_recent_tokens": 50_000}, max_tokens=20_000)
    assert per_call.effective_keep_recent_tokens == 20_000


def test_the_messages_name_the_bounds_as_numbers() -> None:
    assert problems({"max_tokens": 999}) == {"max_tokens": "must be between 1000 and 1e+07"}
    assert problems({"threshold": 1.5}) == {"threshold": "must be between 0.05 and 1"}


@pytest.mark.parametrize("value", [True, False, "0.8", None, [0.8]])
def test_the_threshold_must_be_a_number(value) -> None:
    assert problems({"threshold": value}) == {"threshold": "must be a number"}


def test_an_integer_threshold_comes_back_as_a_float() -> None:
    clean = validate_overrides({"threshold": 1})
    assert clean == {"threshold": 1.0} and type(clean["threshold"]) is float


@pytest.mark.parametrize("value", [True, False, 2000.0, "2000", None, [2000]])
def test_the_other_settings_must_be_integers(value) -> None:
    assert problems({"max_tokens": value}) == {"max_tokens": "must be an integer"}


def test_keep_recent_tokens_may_be_null_to_use_the_default_share() -> None:
    assert validate_overrides({"keep_recent_tokens": None}) == {"keep_recent_tokens": None}
    assert problems({"cache_ttl_seconds": None}) == {"cache_ttl_seconds": "must be an integer"}


def test_integers_stay_integers_and_every_key_comes_back() -> None:
    given = {"max_tokens": 50_000, "threshold": 0.8, "keep_recent_tokens": 0, "ttl_keep_recent_turns": 3}
    clean = validate_overrides(given)
    assert clean == given and type(clean["max_tokens"]) is int and type(clean["keep_recent_tokens"]) is int


def test_every_problem_is_reported_at_once_and_nothing_else() -> None:
    assert problems(
        {
            "max_tokens": 500,
            "color": "blue",
            "threshold": "high",
            "cache_ttl_seconds": 1.5,
            "summary_max_tokens": 100,
        }
    ) == {
        "max_tokens": "must be between 1000 and 1e+07",
        "color": "unknown setting",
        "threshold": "must be a number",
        "cache_ttl_seconds": "must be an integer",
    }
    with pytest.raises(SettingsError, match="color: unknown setting"):
        validate_overrides({"color": 1})


def test_a_null_keep_recent_tokens_does_not_end_the_checks() -> None:
    assert problems({"keep_recent_tokens": None, "max_tokens": 5}) == {
        "max_tokens": "must be between 1000 and 1e+07"
    }
