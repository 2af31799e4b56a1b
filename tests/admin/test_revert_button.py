"""Issue 35: the conversation page's "Revert this compaction" button (operators, with a
confirmation) reverts the newest applied compaction as ``POST …/compactions/{id}/revert/`` does;
the compaction pages show the public ``cmp_…`` id and who reverted it."""

from __future__ import annotations

import pytest

from tests.admin import urls
from tests.admin.builders import compacted_conversation
from timeline_app import selectors
from timeline_app.domain import blocks as b
from timeline_app.models import Compaction, Tenant

pytestmark = pytest.mark.django_db


def test_the_operator_reverts_the_newest_compaction_with_a_confirmation(operator, compacted):
    conversation, timeline = compacted
    row = Compaction.objects.get(timeline=timeline, status="applied")
    page = operator.get(urls.conversation(conversation.pk)).content.decode()
    assert row.public_id in page and "tl-revert-form" in page and "confirm(" in page
    response = operator.post(
        urls.revert(conversation.pk),
        {"context": "main", "compaction": row.public_id},
        follow=True,
    )
    assert "reverted: the context renders as before it" in response.content.decode()
    row.refresh_from_db()
    assert (row.status, row.reverted_by) == ("reverted", "staff:olga-operator")
    assert not any(blk.type == b.SUMMARY for blk in selectors.visible_window(timeline=timeline))
    # The conversation page's operations log, newest first: the revert by the operator.
    log = response.content.decode().split('class="module tl-operations"')[1].split("</table>")[0]
    assert log.index("compaction_reverted") < log.index("compaction_applied")
    assert "staff:olga-operator" in log
    detail = operator.get(urls.change("compaction", row.pk)).content.decode()
    assert row.public_id in detail and "staff:olga-operator" in detail
    listed = operator.get(urls.changelist("compaction")).content.decode()
    assert row.public_id in listed


def test_support_sees_no_button_and_cannot_post_it(support, compacted):
    conversation, timeline = compacted
    row = Compaction.objects.get(timeline=timeline, status="applied")
    assert "tl-revert-form" not in support.get(urls.conversation(conversation.pk)).content.decode()
    response = support.post(
        urls.revert(conversation.pk),
        {"context": "main", "compaction": row.public_id},
    )
    assert response.status_code == 403
    row.refresh_from_db()
    assert row.status == "applied"


def test_an_operator_limited_to_one_tenant_cannot_revert_another_tenants_compaction(operator, operator_user):
    compacted_conversation(Tenant.objects.create(name="acme"), public_id="mine")
    theirs, timeline = compacted_conversation(Tenant.objects.create(name="globex"), public_id="theirs")
    Tenant.objects.get(name="acme").staff_users.add(operator_user)
    row = Compaction.objects.get(timeline=timeline, status="applied")
    response = operator.post(urls.revert(theirs.pk), {"context": "main", "compaction": row.public_id})
    assert response.status_code == 302  # to the list, as every page of another tenant's conversation
    row.refresh_from_db()
    assert row.status == "applied"


def test_the_page_shows_exactly_the_newest_operations_shown_entries(support, compacted):
    """``presenters.OPERATIONS_SHOWN`` entries at most, the newest: with one more recorded, the
    oldest drops off the page (the API's list has them all)."""
    from timeline_app.admin.presenters import OPERATIONS_SHOWN
    from timeline_app.models import Operation
    from timeline_app.services.operations import operation_record

    conversation, timeline = compacted
    Operation.objects.filter(timeline=timeline).delete()
    for n in range(OPERATIONS_SHOWN + 1):
        operation_record(timeline=timeline, kind="hidden", actor="system", paths=[f"p:{n:03d}"])

    def logged(page: str) -> list[str]:
        log = page.split('class="module tl-operations"')[1].split("</table>")[0]
        return [f"p:{n:03d}" for n in range(OPERATIONS_SHOWN + 1) if f"p:{n:03d}" in log]

    shown = logged(support.get(urls.conversation(conversation.pk)).content.decode())
    assert len(shown) == OPERATIONS_SHOWN and "p:000" not in shown and f"p:{OPERATIONS_SHOWN:03d}" in shown
