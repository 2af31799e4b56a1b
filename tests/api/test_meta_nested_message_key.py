"""Only a stored OpenAI message at the top level of ``meta`` (``meta.openai_message``, whose text
has its own limits) is left out of the byte cap: an ``openai_message`` key anywhere below the top
level is ordinary meta and counts (issue 30; a block could otherwise carry megabytes of meta
under ``{"x": {"openai_message": …}}``)."""

from __future__ import annotations

import pytest
from django.test import override_settings

from timeline_app.models import Block

from .hostile import C, assert_error, assert_still_readable

pytestmark = pytest.mark.django_db
SMALL = {"TIMELINE_MAX_META_BYTES": 200, "TIMELINE_MAX_META_KEYS": 20, "TIMELINE_MAX_META_DEPTH": 4}
BIG_MESSAGE = {"role": "user", "content": "w" * 1_000}


@override_settings(**SMALL)
@pytest.mark.parametrize(
    "meta",
    [
        {"x": {"openai_message": BIG_MESSAGE}},
        {"x": [{"openai_message": BIG_MESSAGE}]},
        {"x": {"openai_message": "w" * 1_000}},
    ],
    ids=["in-an-object", "in-a-list", "a-string"],
)
def test_an_openai_message_key_below_the_top_level_counts_toward_the_byte_cap(owner, conversation, meta):
    error = assert_error(owner.post(f"{C}/c1/blocks/", {"blocks": [{"type": "x", "meta": meta}]}), 400)

    assert "bytes" in str(error["details"]["blocks"]["0"]), error
    assert Block.objects.count() == 0
    assert_still_readable(owner, "c1")


@override_settings(**SMALL)
def test_the_same_message_under_another_key_below_the_top_level_is_refused_alike(owner, conversation):
    meta = {"x": {"message": BIG_MESSAGE}}
    assert_error(owner.post(f"{C}/c1/blocks/", {"blocks": [{"type": "x", "meta": meta}]}), 400)
    small = {"x": {"openai_message": {"role": "user", "content": "hi"}}}
    response = owner.post(f"{C}/c1/blocks/", {"blocks": [{"type": "x", "meta": small}]})
    assert response.status_code == 201, response.content
    assert Block.objects.get().meta == small
