"""The clear as a request starts is skipped only on a connection known to hold nothing (issue 38):
cleared outside a transaction by this process, nothing written since."""

from __future__ import annotations

import pytest
from django.db import connection, transaction

from tests import rls_support
from tests.services.compaction.helpers import needs_concurrent_db
from timeline_app import tenancy

pytestmark = [needs_concurrent_db, pytest.mark.django_db(transaction=True)]


def test_a_clear_outside_a_transaction_is_known_and_a_later_write_forgets_it():
    tenancy.tenant_set(7)
    assert not tenancy._known_clear(connection)
    tenancy.scope_clear()
    assert tenancy._known_clear(connection)
    tenancy.tenant_set(7)
    assert not tenancy._known_clear(connection)
    tenancy.scope_clear(unless_known_clear=True)  # not known: sent
    assert rls_support.current_settings() == ("", "", "")


def test_a_clear_inside_a_rolled_back_transaction_is_not_trusted():
    tenancy.tenant_set(7)
    with pytest.raises(RuntimeError), transaction.atomic():
        tenancy.scope_clear()
        raise RuntimeError("rolled back: the session has tenant 7 again")
    assert rls_support.current_settings()[0] == "7"
    assert not tenancy._known_clear(connection)
    tenancy.scope_clear(unless_known_clear=True)
    assert rls_support.current_settings() == ("", "", "")


def test_a_new_driver_connection_is_not_taken_for_the_cleared_one():
    tenancy.scope_clear()
    assert tenancy._known_clear(connection)
    connection.close()
    connection.ensure_connection()
    assert not tenancy._known_clear(connection)


def test_the_key_lookup_sets_its_tenant_in_its_own_statement_and_forgets_a_known_clear(owner, conversation):
    from timeline_app import selectors
    from timeline_app.models import ApiKey

    tenancy.scope_clear()
    assert tenancy._known_clear(connection)
    tenancy.api_key_lookup_scope(ApiKey.hash_key(owner.raw_key))
    key = selectors.api_key_lookup(raw_key=owner.raw_key, claim_tenant=True)
    assert key is not None and key.tenant_id == owner.tenant.pk
    assert rls_support.current_settings() == (str(owner.tenant.pk), "", "")
    assert not tenancy._known_clear(connection)
