"""Issue 25: the conversation list's one search box finds conversations by public id, by title and
by text in their blocks (the search index, any context), only among the tenants the staff user may
see. The two-tenant fixture plants the same word (``ribeira``) in acme/c1, acme/c2 and globex/c1."""

from __future__ import annotations

import pytest

from tests.admin import urls
from tests.fixtures.two_tenants import CONTEXT, WORD
from timeline_app.models import Tenant
from timeline_app.services.conversations import conversation_create

pytestmark = pytest.mark.django_db


def _found(client, q: str) -> list[tuple[str, str]]:
    response = client.get(urls.changelist("conversation"), {"q": q})
    assert response.status_code == 200
    return sorted((c.tenant.name, c.public_id) for c in response.context["cl"].result_list)


def _limit(user, tenant_name: str) -> None:
    Tenant.objects.get(name=tenant_name).staff_users.add(user)


def test_block_text_finds_every_conversation_with_it_for_staff_of_all_tenants(support, two_tenants):
    assert _found(support, WORD) == [("acme", "c1"), ("acme", "c2"), ("globex", "c1")]
    # A word only globex/c1's blocks carry (in both its contexts), not its title's case.
    assert _found(support, "globexc1mark") == [("globex", "c1")]


def test_a_word_of_another_context_finds_the_conversation(support, two_tenants):
    side = two_tenants.same_tenant
    conversation_create(tenant=side.caller.tenant, public_id="c3", title="nothing here")
    response = side.caller.post(
        f"{side.url}contexts/{CONTEXT}/blocks/",
        {"blocks": [{"type": "react.note", "author": "react", "text": "zyzzyva only in attempt_a"}]},
    )
    assert response.status_code == 201, response.content
    assert _found(support, "zyzzyva") == [("acme", "c2")]


def test_public_id_and_title_still_match(support, two_tenants):
    assert _found(support, "c2") == [("acme", "c2")]
    assert _found(support, "Trip") == [("acme", "c1"), ("acme", "c2"), ("globex", "c1")]


def test_a_staff_user_limited_to_one_tenant_never_finds_another_tenants_conversation(
    support, support_user, two_tenants
):
    _limit(support_user, "acme")
    # globex/c1 carries the same word, the same public id and the same title words.
    assert _found(support, WORD) == [("acme", "c1"), ("acme", "c2")]
    assert _found(support, "c1") == [("acme", "c1")]
    assert _found(support, "Trip") == [("acme", "c1"), ("acme", "c2")]
    assert _found(support, "globexc1mark") == []
    assert _found(support, "") == [("acme", "c1"), ("acme", "c2")]
    # Its pages are out of reach too, by database id and by public id.
    other = two_tenants.other_tenant.conversation
    response = support.get(urls.conversation(other.pk))
    assert response.status_code == 302 and "GLOBEXC1MARK" not in response.content.decode()
    assert support.get(urls.render_preview(other.pk)).status_code == 302
    blocks = support.get(urls.changelist("block")).content.decode()
    assert "GLOBEXC1MARK" not in blocks and blocks.count("react.tool.call") > 0
    # The tenant filter offers only acme (one choice: Django leaves the filter out), never globex.
    page = support.get(urls.changelist("conversation")).content.decode()
    assert "acme" in page and "globex" not in page


def test_limited_to_the_other_tenant_finds_only_its_conversation(support, support_user, two_tenants):
    _limit(support_user, "globex")
    assert _found(support, WORD) == [("globex", "c1")]
    assert _found(support, "ACMEC1MARK") == []


def test_a_query_without_words_for_the_index_still_searches_ids_and_titles(support, two_tenants):
    assert _found(support, "!!!") == []
    assert _found(support, "-ribeira") == []


def test_a_compaction_id_or_a_render_id_finds_its_conversation_only_within_reach(
    support, support_user, two_tenants
):
    """Issue 35: the search box takes the ids the API answers (``cmp_…``, ``rnd_…``)."""
    ids = {}
    for side in (two_tenants.same_tenant, two_tenants.other_tenant):
        name = f"{side.conversation.tenant.name}/{side.conversation.public_id}"
        compacted = side.caller.post(f"{side.url}compact/", {"force": True, "wait": True}).json()
        rendered = side.caller.post(f"{side.url}render/", {"format": "text"}).json()
        ids[name] = (compacted["id"], rendered["render_id"])
    for name, found in (("acme/c2", ("acme", "c2")), ("globex/c1", ("globex", "c1"))):
        for record_id in ids[name]:
            assert _found(support, record_id) == [found], record_id
    assert _found(support, "cmp_0123456789abcdef") == []
    _limit(support_user, "acme")
    for record_id in ids["globex/c1"]:
        assert _found(support, record_id) == [], record_id
    assert _found(support, ids["acme/c2"][0]) == [("acme", "c2")]
