import re
from io import StringIO

import pytest
from django.core.management import call_command

from timeline_app.models import ApiKey, Block, Compaction, Conversation, RenderRecord

pytestmark = pytest.mark.django_db


def test_create_api_key_prints_the_key_alone_on_the_last_line():
    out = StringIO()
    call_command("create_api_key", "--tenant", "newco", stdout=out)
    raw = out.getvalue().strip().splitlines()[-1]
    assert raw.startswith("tlk_") and " " not in raw
    key = ApiKey.objects.get(tenant__name="newco")
    assert key.key_hash == ApiKey.hash_key(raw) and raw not in key.key_hash


def _create_key(tenant: str) -> str:
    out = StringIO()
    call_command("create_api_key", "--tenant", tenant, stdout=out)
    return out.getvalue().strip().splitlines()[-1]


def test_revoke_api_key_by_prefix_revokes_that_key_only():
    raw = _create_key("newco")
    kept = _create_key("newco")
    other_tenant = _create_key("otherco")
    call_command("revoke_api_key", raw[:12], stdout=StringIO())
    assert ApiKey.objects.get(key_hash=ApiKey.hash_key(raw)).revoked_at is not None
    assert ApiKey.objects.get(key_hash=ApiKey.hash_key(kept)).revoked_at is None
    assert ApiKey.objects.get(key_hash=ApiKey.hash_key(other_tenant)).revoked_at is None


def test_setup_demo_is_idempotent_and_prints_key_and_login():
    out = StringIO()
    call_command("setup_demo", stdout=out)
    call_command("setup_demo", stdout=StringIO())
    text = out.getvalue()
    assert "API key: tlk_" in text and "password:" in text
    conversation = Conversation.objects.get(public_id="demo-wuppertal")
    assert conversation.timelines.get().blocks.filter(type="react.tool.result").count() == 4
    assert conversation.timelines.get().blocks.filter(type="user.attachment").count() == 1


def test_setup_demo_has_a_conversation_for_every_admin_panel():
    call_command("setup_demo", stdout=StringIO())
    call_command("setup_demo", stdout=StringIO())
    conversation = Conversation.objects.get(public_id="demo-trip-planning")
    timeline = conversation.timelines.get()
    assert Compaction.objects.filter(timeline=timeline, status="applied").count() == 1
    assert Block.objects.filter(timeline=timeline, hidden=True, hidden_reason="manual").exists()
    renders = list(RenderRecord.objects.filter(timeline=timeline).order_by("id"))
    assert renders[0].reason == "first_render"
    assert "compacted" in {r.reason for r in renders}
    assert renders[-1].reason == "ttl_expired"
    assert renders[-1].pruning_status == "pruned"
    # Idempotent: the second run added nothing.
    assert len(renders) == 4


def test_setup_demo_revokes_the_demo_key_an_earlier_run_printed():
    outputs = [StringIO(), StringIO()]
    for out in outputs:
        call_command("setup_demo", stdout=out)
    first, second = (out.getvalue().split("API key: ")[1].split()[0] for out in outputs)

    active = ApiKey.objects.filter(tenant__name="demo", revoked_at__isnull=True)
    assert [key.key_hash for key in active] == [ApiKey.hash_key(second)]
    assert ApiKey.objects.get(key_hash=ApiKey.hash_key(first)).revoked_at is not None


def test_bench_on_an_unmigrated_database_says_to_migrate_first(monkeypatch):
    from django.core.management.base import CommandError

    from timeline_bench.management.commands import bench

    monkeypatch.setattr(bench, "unapplied_migrations", lambda: 21)
    with pytest.raises(
        CommandError, match=re.escape("run `make run` once or `.venv/bin/python manage.py migrate` first")
    ):
        call_command("bench", "append")


@pytest.mark.django_db
def test_setup_demo_render_history_lies_inside_its_conversations_lifetime():
    call_command("setup_demo", stdout=StringIO())
    for conversation in Conversation.objects.all():
        times = list(
            RenderRecord.objects.filter(timeline__conversation=conversation).values_list(
                "rendered_at", flat=True
            )
        )
        conversation.refresh_from_db()
        for at in times:
            assert conversation.started_at <= at <= conversation.last_activity_at, (
                conversation.public_id,
                at,
            )


@pytest.mark.django_db
def test_setup_demo_dates_what_its_past_renders_saw_before_them():
    """The cache demo's renders are dated hours back: the blocks and the compaction they show are
    dated before them (they were dated at load time, after every render)."""
    call_command("setup_demo", stdout=StringIO())
    timeline = Conversation.objects.get(public_id="demo-trip-planning").timelines.get()
    renders = list(RenderRecord.objects.filter(timeline=timeline).order_by("rendered_at"))
    compaction = Compaction.objects.get(timeline=timeline)
    assert renders[0].rendered_at < compaction.started_at <= compaction.finished_at < renders[1].rendered_at
    for render in renders:
        newest = Block.objects.filter(timeline=timeline, seq__lte=render.window_last_seq).latest("created_at")
        assert newest.created_at <= render.rendered_at, (render.reason, newest.seq)
    # The other demo conversation is left as loaded.
    other = Conversation.objects.get(public_id="demo-wuppertal").timelines.get()
    assert Block.objects.filter(timeline=other, created_at__gt=renders[-1].rendered_at).exists()
