"""Issue 13: the first render after the cache TTL hides thousands of blocks at once, so a hide is
cheap. Each block is written with what it will cost once TTL-pruned (pruning then tokenizes
nothing), and on PostgreSQL a hide updates the row in place (a HOT update: no index entry
written), which the block table's fill factor and a search vector that ignores the replacement
text allow (migration 0008)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from timeline_app.domain.blocks import NOTES, TOOL_RESULT, TURN_HEADER, USER_PROMPT
from timeline_app.domain.contributions import NewBlock
from timeline_app.domain.costs import hidden_tokens
from timeline_app.models import Block, Timeline
from timeline_app.rendering.pipeline import RenderOptions
from timeline_app.rendering.ttl import Hide, replacement_text_for
from timeline_app.services.blocks import blocks_append
from timeline_app.services.export import timeline_export, timeline_import
from timeline_app.services.hiding import hides_store
from timeline_app.services.render import timeline_render

pytestmark = pytest.mark.django_db
postgres_only = pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL storage")


def _turns(timeline: Timeline, count: int, *, result_text: str = "first line\nsecond line") -> None:
    blocks: list[NewBlock] = []
    for n in range(count):
        turn = f"turn_{n}"
        blocks += [
            NewBlock(type=TURN_HEADER, turn_id=turn),
            NewBlock(type=USER_PROMPT, turn_id=turn, text=f"question {n}"),
            NewBlock(type=NOTES, turn_id=turn, text=f"short notes {n}"),
            NewBlock(
                type=TOOL_RESULT, turn_id=turn, text=f"{result_text} {n}", path=f"tc:{turn}.tc_1.result"
            ),
        ]
    blocks_append(timeline=timeline, blocks=blocks)


def test_a_block_is_stored_with_what_it_costs_once_pruned(timeline):
    _turns(timeline, 2)
    for row in Block.objects.filter(timeline=timeline):
        value = row.to_value()
        if row.type == TOOL_RESULT:
            assert row.replacement_tokens == hidden_tokens(value, replacement_text_for(value)) > 0
        else:
            assert row.replacement_tokens == 0, row.type
        assert not row.hidden


def test_the_first_render_after_the_ttl_hides_at_the_stored_cost(timeline):
    _turns(timeline, 8)  # the 6 most recent turns are kept
    # A stored cost pruning must take as it is (a recount would give the real one).
    Block.objects.filter(timeline=timeline, path="tc:turn_0.tc_1.result").update(replacement_tokens=4321)
    now = timezone.now()
    Timeline.objects.filter(pk=timeline.pk).update(cache_last_touch_at=now - timedelta(hours=1))
    timeline.refresh_from_db()
    outcome = timeline_render(timeline=timeline, options=RenderOptions(format="anthropic"), now=now)
    assert outcome.pruning_status == "pruned"
    hidden = {row.path: row for row in Block.objects.filter(timeline=timeline, hidden=True)}
    assert set(hidden) == {f"tc:turn_{n}.tc_1.result" for n in range(2)}
    assert hidden["tc:turn_0.tc_1.result"].replacement_tokens == 4321
    one = hidden["tc:turn_1.tc_1.result"]
    assert one.replacement_tokens == hidden_tokens(one.to_value(), one.replacement_text)


def test_an_imported_timeline_keeps_what_its_blocks_cost_once_pruned(timeline, owner):
    _turns(timeline, 2)
    copy = timeline_import(tenant=owner.tenant, payload=timeline_export(timeline=timeline), public_id="copy")
    stored = dict(Block.objects.filter(timeline=timeline).values_list("seq", "replacement_tokens"))
    copied = dict(Block.objects.filter(timeline__conversation=copy).values_list("seq", "replacement_tokens"))
    assert copied == stored and any(copied.values())


@postgres_only
def test_the_block_table_leaves_room_on_each_page_for_hides():
    with connection.cursor() as cursor:
        cursor.execute("SELECT reloptions FROM pg_class WHERE relname = %s", [Block._meta.db_table])
        (options,) = cursor.fetchone()
    assert "fillfactor=80" in options


@postgres_only
def test_a_hide_rewrites_no_index_entry(timeline):
    _turns(timeline, 6)
    results = list(Block.objects.filter(timeline=timeline, type=TOOL_RESULT).order_by("seq"))

    def hot_updates() -> tuple[int, int]:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_xact_user_tables WHERE relname = %s",
                [Block._meta.db_table],
            )
            return cursor.fetchone()

    before = hot_updates()
    hides_store(
        timeline=timeline,
        hides=[
            Hide(
                seq=row.seq,
                path=row.path,
                replacement_text="[hidden: unique-replacement-word]",
                reason="manual",
                replacement_tokens=7,
            )
            for row in results
        ],
    )
    after = hot_updates()
    assert after[0] - before[0] == len(results) == 6
    assert after[1] - before[1] == len(results)  # every one heap-only: no index touched
