"""Support staff see every tenant, but one conversation's pages show only its own blocks: the
two-tenant fixture plants the same ids, paths and words in acme/c1, acme/c2 and globex/c1."""

from __future__ import annotations

import pytest

from tests.admin import urls
from tests.fixtures.two_tenants import CONTEXT

pytestmark = pytest.mark.django_db


def _only(side, two_tenants, html: str) -> None:
    assert side.marker in html
    for other in (two_tenants.mine, two_tenants.same_tenant, two_tenants.other_tenant):
        if other is not side:
            assert other.marker not in html


@pytest.mark.parametrize("which", ["mine", "same_tenant", "other_tenant"])
@pytest.mark.parametrize("context", ["main", CONTEXT])
def test_conversation_page_shows_only_its_own_blocks(support, two_tenants, which, context):
    side = getattr(two_tenants, which)
    response = support.get(urls.conversation(side.conversation.pk, context=context))
    assert response.status_code == 200
    _only(side, two_tenants, response.content.decode())


@pytest.mark.parametrize("which", ["mine", "same_tenant", "other_tenant"])
@pytest.mark.parametrize("context", ["main", CONTEXT])
def test_render_preview_shows_only_its_own_blocks(support, two_tenants, which, context):
    side = getattr(two_tenants, which)
    response = support.get(
        urls.render_preview(side.conversation.pk, context=context),
    )
    assert response.status_code == 200
    _only(side, two_tenants, response.content.decode())
