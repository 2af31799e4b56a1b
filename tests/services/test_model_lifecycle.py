"""A conversation naming a retired model gets a warning once per process, not per call, and its
renders and usage keep working (the model stays priced)."""

import logging
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from tests.factories import add_turns
from timeline_app.rendering.pipeline import RenderOptions
from timeline_app.rendering.request_head import RequestHead
from timeline_app.rendering.usage.pricing import DEFAULT_PRICES, end_of_life
from timeline_app.services import model_lifecycle
from timeline_app.services.compaction import configured_summarizer
from timeline_app.services.render import timeline_render

pytestmark = pytest.mark.django_db
T0 = datetime(2026, 11, 28, 12, 0, tzinfo=UTC)
LOGGER = "timeline_app.services.model_lifecycle"


@pytest.fixture(autouse=True)
def fresh_process() -> Iterator[None]:
    model_lifecycle.forget_warnings()
    yield
    model_lifecycle.forget_warnings()


def warnings_in(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == LOGGER and r.levelno == logging.WARNING]


def test_a_retired_model_is_warned_about_once_however_many_calls_name_it(timeline, caplog):
    add_turns(timeline, 2)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        for k, model in enumerate(["claude-sonnet-4-5", "claude-sonnet-4-5-20250929", "claude-sonnet-4-5"]):
            outcome = timeline_render(
                timeline=timeline,
                options=RenderOptions(),
                now=T0 + timedelta(seconds=k),
                head=RequestHead(model=model),
            )
            assert outcome.forecast is not None  # the render works as before
    (message,) = warnings_in(caplog)
    assert "claude-sonnet-4-5" in message and "2026-11-30" in message and "claude-sonnet-5-5" in message


def test_each_retired_family_is_warned_about_once_and_a_current_one_never(timeline, caplog, settings):
    settings.TIMELINE_SUMMARIZER = "anthropic"
    settings.ANTHROPIC_API_KEY = "sk-test"
    add_turns(timeline, 1)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        for k, model in enumerate(
            ["claude-sonnet-5-5", "gpt-5.6-sol", "claude-opus-4-5", "claude-sonnet-4-5"]
        ):
            timeline_render(
                timeline=timeline,
                options=RenderOptions(),
                now=T0 + timedelta(seconds=k),
                head=RequestHead(model=model),
            )
        configured_summarizer(model="claude-opus-4-5-20251101")  # already warned about
        configured_summarizer()  # the default summary model is current
    assert [m.split()[1] for m in warnings_in(caplog)] == ["claude-opus-4-5", "claude-sonnet-4-5"]


def test_retired_models_stay_priced_and_the_sdk_deprecation_table_is_covered():
    from anthropic._data.deprecated_models import DEPRECATED_MODELS

    for model in DEPRECATED_MODELS:
        assert end_of_life(model) is not None, model  # every SDK-deprecated model is listed
    for family in ("claude-sonnet-4-5", "claude-opus-4-5"):
        assert family in DEFAULT_PRICES
