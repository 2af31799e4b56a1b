"""``bench engine`` times its renders as the API runs them: under one tenant's row-level security
setting, not the command's widened scope; and it says whether the connected role is subject to
row-level security at all (a superuser measures none of its cost)."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection

from tests import rls_support
from timeline_app import tenancy
from timeline_app.models import Tenant
from timeline_bench import engine
from timeline_bench import render as render_at_scale
from timeline_bench.common import row_level_security


def _spy(monkeypatch: pytest.MonkeyPatch, module: Any) -> list[tuple[int, tuple[str, str, str]]]:
    """Each render's tenant and the session's (tenant, scope, key hash) settings as it starts."""
    seen: list[tuple[int, tuple[str, str, str]]] = []
    real = module.timeline_render

    def spy(**kwargs: Any) -> Any:
        seen.append((kwargs["timeline"].tenant_id, rls_support.current_settings()))
        return real(**kwargs)

    monkeypatch.setattr(module, "timeline_render", spy)
    return seen


@pytest.mark.django_db(transaction=True)  # the render-at-scale bench vacuums between samples
@pytest.mark.parametrize(
    "module, run",
    [
        (engine, lambda write: engine.stored_renders(write, blocks=300)),
        (render_at_scale, lambda write: render_at_scale.run(write, blocks=300)),
    ],
    ids=["stored_renders", "render_at_scale"],
)
def test_the_timed_renders_run_under_the_scratch_tenants_own_setting(monkeypatch, module, run):
    if connection.vendor != "postgresql":
        pytest.skip("row-level security is PostgreSQL's")
    other = Tenant.objects.create(name="another tenant")  # the settings must name the scratch one
    seen = _spy(monkeypatch, module)
    lines: list[str] = []

    with tenancy.tenant_scope_all():  # as the management command runs it
        run(lines.append)

    assert seen, lines
    for tenant_id, settings in seen:
        assert tenant_id != other.pk
        assert settings == (str(tenant_id), "", ""), settings
    assert list(Tenant.objects.values_list("pk", flat=True)) == [other.pk]  # the scratch tenant is gone


@pytest.mark.django_db
def test_the_line_says_a_superuser_skips_row_level_security():
    if connection.vendor != "postgresql":
        assert row_level_security().startswith("row-level security: none")
        return
    assert row_level_security().startswith("row-level security: NOT enforced: role postgres is a superuser")


@pytest.mark.django_db
def test_the_line_says_the_application_role_is_subject_to_row_level_security(app_role):
    assert row_level_security() == (
        f"row-level security: enforced for role {app_role} (no superuser, no BYPASSRLS)"
    )


@pytest.mark.django_db(transaction=True)  # the bench vacuums between samples
def test_render_at_scale_renders_its_whole_window_never_a_compacted_one(monkeypatch):
    """Its conversations' max_tokens must validate: an override that does not falls back to the
    default and the window compacts (the figures would then time a render of a few hundred blocks)."""
    outcomes: list[Any] = []
    real = render_at_scale.timeline_render

    def spy(**kwargs: Any) -> Any:
        outcomes.append(real(**kwargs))
        return outcomes[-1]

    monkeypatch.setattr(render_at_scale, "timeline_render", spy)

    with tenancy.tenant_scope_all():
        render_at_scale.run([].append, blocks=300)

    assert outcomes
    for outcome in outcomes:
        assert outcome.ignored_settings == {}
        assert outcome.settings.max_tokens == render_at_scale.NEVER_COMPACTS
        assert outcome.compaction is None
