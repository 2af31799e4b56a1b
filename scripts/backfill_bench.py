"""Time migration 0015's backfill on a large block table, then 0016 (row-level security) and 0017
(the unique constraints rebuilt to include the conversation, ``CONCURRENTLY``) (docs/operations.md).

Run against a throwaway PostgreSQL database (it migrates it back to 0014 and fills it):
    TIMELINE_RUN='.venv/bin/python scripts/backfill_bench.py 1000000' bash scripts/test.sh
"""

from __future__ import annotations

import os
import sys
import time

import django

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402


def main(blocks: int, timelines: int = 1000) -> None:
    call_command("migrate", verbosity=0)  # everything, then back to before the owner keys
    call_command("migrate", "timeline_app", "0014", verbosity=0)
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO timeline_app_tenant (name, created_at) VALUES ('bench', now()) RETURNING id"
        )
        tenant = cursor.fetchone()[0]
        cursor.execute(
            "INSERT INTO timeline_app_conversation (tenant_id, public_id, title, started_at, settings,"
            " created_at, last_activity_at) SELECT %s, 'c' || g, '', now(), '{}', now(), now()"
            " FROM generate_series(1, %s) g",
            [tenant, timelines],
        )
        cursor.execute(
            "INSERT INTO timeline_app_timeline (conversation_id, name, next_seq, view_start_seq, version,"
            " compaction_strategy, created_at) SELECT id, 'main', 1, 0, 0, '{}', now()"
            " FROM timeline_app_conversation"
        )
        started = time.perf_counter()
        cursor.execute(
            "INSERT INTO timeline_app_block (timeline_id, seq, turn_id, type, author, ts, mime, text, path,"
            " meta, hidden, replacement_text, hidden_reason, tokens, replacement_tokens, created_at)"
            " SELECT t.id, g, 'turn_1', 'react.notes', 'react', '', '', repeat('x', 500), '', '{}', false,"
            " '', '', 100, 10, now()"
            " FROM timeline_app_timeline t, generate_series(1, %s) g",
            [blocks // timelines],
        )
        cursor.execute("VACUUM ANALYZE timeline_app_block")
        print(f"inserted {blocks:,} blocks in {time.perf_counter() - started:.1f} s", flush=True)
    started = time.perf_counter()
    call_command("migrate", "timeline_app", "0015", verbosity=0)
    print(f"migration 0015 (backfill + NOT NULL) on {blocks:,} blocks: {time.perf_counter() - started:.1f} s")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM timeline_app_block WHERE tenant_id IS NULL OR conversation_id IS NULL"
        )
        assert cursor.fetchone()[0] == 0
    for migration in ("0016", "0017"):
        started = time.perf_counter()
        call_command("migrate", "timeline_app", migration, verbosity=0)
        print(
            f"migration {migration} on {blocks:,} blocks: {time.perf_counter() - started:.1f} s", flush=True
        )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
