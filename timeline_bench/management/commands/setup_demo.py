"""Prepare the embedded demo: a tenant, an API key, an admin login and a demo conversation."""

import secrets
from datetime import timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db.models import Max
from django.utils import timezone

from timeline_app import tenancy
from timeline_app.domain import blocks as b
from timeline_app.domain.contributions import NewAttachment, NewBlock, tool_call_blocks
from timeline_app.models import Block, Compaction, Conversation, Tenant, Timeline
from timeline_app.rendering.pipeline import RenderOptions
from timeline_app.roles import ensure_roles
from timeline_app.selectors.settings import timeline_settings
from timeline_app.services.api_keys import api_key_create, api_keys_revoke_named
from timeline_app.services.blocks import blocks_append, turn_start
from timeline_app.services.compaction import compaction_run
from timeline_app.services.conversations import conversation_create
from timeline_app.services.hiding import blocks_hide
from timeline_app.services.render import timeline_render
from timeline_app.services.sources import sources_merge

DEMO_ID = "demo-wuppertal"
# A longer conversation with small settings, so every panel of the admin shows something: an
# applied compaction, a hidden block, and a render history with a TTL-pruned render.
CACHE_DEMO_ID = "demo-trip-planning"
CACHE_DEMO_SETTINGS = {"max_tokens": 4000, "keep_recent_tokens": 1200, "ttl_keep_recent_turns": 1}
CACHE_DEMO_TURNS = 10
FILLER = (
    "Timetables, fares and platform changes were compared for every connection of the day; the "
    "notes list each train, its stops and the walking time between the platforms. "
)
DEMO_KEY_NAME = "make run"
# A one-page PDF, small enough to ship inline.
DEMO_PDF = (
    b"%PDF-1.4\n1 0 obj<</Type /Catalog /Pages 2 0 R>>endobj\n"
    b"2 0 obj<</Type /Pages /Kids [3 0 R] /Count 1>>endobj\n"
    b"3 0 obj<</Type /Page /Parent 2 0 R /MediaBox [0 0 200 100]>>endobj\n"
    b"trailer<</Root 1 0 R>>\n%%EOF\n"
)

TURNS: list[dict[str, Any]] = [
    {
        "prompt": "Could you find top 3 places to eat here in Wuppertal?",
        "attachment": True,
        "tools": [
            (
                "web_tools.web_search",
                {"query": "best restaurants Wuppertal"},
                ["Gasthaus Stübchen 4.8", "Bistro Luisenviertel 4.7", "Trattoria Elberfeld 4.6"],
            ),
        ],
        "answer": "Top 3: Gasthaus Stübchen, Bistro Luisenviertel and Trattoria Elberfeld.",
    },
    {
        "prompt": "Which of them is open on Sunday evening?",
        "tools": [
            ("web_tools.fetch_page", {"url": "https://example.org/stuebchen"}, ["Sun 17:00-22:00"]),
            ("web_tools.fetch_page", {"url": "https://example.org/luisenviertel"}, ["Sun closed"]),
        ],
        "answer": "Gasthaus Stübchen is open on Sunday from 17:00 to 22:00; Bistro Luisenviertel is closed.",
    },
    {
        "prompt": "Book a table for two at 19:00 there.",
        "tools": [
            (
                "booking.reserve",
                {"place": "Gasthaus Stübchen", "time": "19:00", "people": 2},
                ["confirmed #A17"],
            )
        ],
        "answer": "Booked: Gasthaus Stübchen, Sunday 19:00, two people (confirmation A17).",
    },
]


class Command(BaseCommand):
    help = "Create the demo tenant, an API key, the admin login and a demo conversation (idempotent)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--admin-user", default="admin")
        parser.add_argument("--base-url", default="http://127.0.0.1:8000", help="where the server listens")

    def handle(self, *args: Any, **options: Any) -> None:
        with tenancy.tenant_scope_all():  # a management command: every tenant (row-level security)
            self._handle(**options)

    def _handle(self, **options: Any) -> None:
        tenant, _ = Tenant.objects.get_or_create(name="demo")
        if not Conversation.objects.filter(tenant=tenant, public_id=DEMO_ID).exists():
            self.load_demo(tenant)
        if not Conversation.objects.filter(tenant=tenant, public_id=CACHE_DEMO_ID).exists():
            self.load_cache_demo(tenant)
        password = secrets.token_urlsafe(9)
        support_group, operator_group = ensure_roles()
        user_model = get_user_model()
        user, _ = user_model.objects.get_or_create(username=options["admin_user"])
        user.is_staff = user.is_superuser = True
        user.set_password(password)
        user.save()
        # Demo logins for the two staff roles (same password): view-only support, and operator.
        for name, group in (("support", support_group), ("operator", operator_group)):
            member, _ = user_model.objects.get_or_create(username=name)
            member.is_staff = True
            member.set_password(password)
            member.save()
            member.groups.set([group])
        # One valid demo key at a time: the keys earlier runs printed stop working.
        api_keys_revoke_named(tenant_name="demo", name=DEMO_KEY_NAME)
        _, raw = api_key_create(tenant_name="demo", name=DEMO_KEY_NAME)
        base = options["base_url"].rstrip("/")
        self.stdout.write("")
        self.stdout.write(
            f"Demo conversations: {DEMO_ID}, {CACHE_DEMO_ID} (compacted, with a render history)"
        )
        self.stdout.write(f"Admin:   {base}/admin/  user: {user.username}  password: {password}")
        self.stdout.write("         (the same password for the users 'support', view only, and 'operator')")
        self.stdout.write(f"API key: {raw}")
        self.stdout.write(f'Try:     curl -H "Authorization: Bearer {raw}" {base}/api/v1/conversations/')

    def load_demo(self, tenant: Tenant) -> None:
        conversation = conversation_create(
            tenant=tenant, public_id=DEMO_ID, title="Dinner in Wuppertal", settings={"max_tokens": 20_000}
        )
        timeline = Timeline.objects.get(conversation=conversation, name=Timeline.DEFAULT_NAME)
        sources_merge(
            timeline=timeline,
            sources=[
                {"url": "https://example.org/stuebchen", "title": "Gasthaus Stübchen", "text": "Rated 4.8."},
                {
                    "url": "https://example.org/luisenviertel",
                    "title": "Bistro Luisenviertel",
                    "text": "Rated 4.7.",
                },
            ],
        )
        for number, turn in enumerate(TURNS, start=1):
            turn_id = f"turn_demo_{number}"
            attachments = []
            if turn.get("attachment"):
                attachments.append(
                    NewAttachment(
                        name="menu.pdf",
                        mime="application/pdf",
                        data=DEMO_PDF,
                        summary="1-page menu, prices & address (Wuppertal)",
                    )
                )
            turn_start(timeline=timeline, turn_id=turn_id, prompt=turn["prompt"], attachments=attachments)
            for index, (tool_id, params, result) in enumerate(turn["tools"], start=1):
                call_id = f"tc_demo{number}{index}"
                blocks_append(
                    timeline=timeline,
                    blocks=tool_call_blocks(
                        turn_id=turn_id,
                        tool_call_id=call_id,
                        tool_id=tool_id,
                        params=params,
                        result={"tool_id": tool_id, "tool_call_id": call_id, "result": result},
                        note=f"Calling {tool_id}",
                    ),
                )
            blocks_append(
                timeline=timeline,
                blocks=[
                    NewBlock(
                        type=b.ASSISTANT_COMPLETION, author="assistant", turn_id=turn_id, text=turn["answer"]
                    )
                ],
            )

    def load_cache_demo(self, tenant: Tenant) -> None:
        """Turns with bulky tool results; a hidden block; renders an hour apart with a compaction
        in between: the first render arms the cache clock, the last finds it expired and prunes."""
        conversation = conversation_create(
            tenant=tenant, public_id=CACHE_DEMO_ID, title="Train trip planning", settings=CACHE_DEMO_SETTINGS
        )
        timeline = Timeline.objects.get(conversation=conversation, name=Timeline.DEFAULT_NAME)
        for number in range(1, CACHE_DEMO_TURNS + 1):
            self.cache_demo_turn(timeline, number)
        blocks_hide(
            timeline=timeline,
            path=b.tool_result_path("turn_trip_02", "tc_trip_02"),
            replacement_text="[hidden by support: outdated timetable, read it by path]",
        )
        options = RenderOptions(format="text", include_sources=True, include_announce=True)
        start = timezone.now() - timedelta(hours=3)
        timeline_render(timeline=_fresh(timeline), options=options, now=start)
        compaction_run(
            timeline=_fresh(timeline),
            settings=timeline_settings(timeline=timeline),
            trigger=Compaction.Trigger.MANUAL,
            force=True,
        )
        timeline_render(timeline=_fresh(timeline), options=options, now=start + timedelta(seconds=40))
        before_last_turn = Block.objects.filter(timeline=timeline).aggregate(last=Max("seq"))["last"]
        self.cache_demo_turn(timeline, CACHE_DEMO_TURNS + 1)
        timeline_render(timeline=_fresh(timeline), options=options, now=start + timedelta(seconds=90))
        # An hour later the prompt cache has expired: old bulky tool results are pruned.
        timeline_render(timeline=_fresh(timeline), options=options, now=start + timedelta(hours=1))
        # The renders are dated in the past: the conversation started before the first of them,
        # so its render history lies inside its lifetime (started → last activity, now), and the
        # rows the renders saw are dated as they would have been written: the first turns before
        # the first render, the compaction between it and the second, the last turn before the third.
        Conversation.objects.filter(pk=conversation.pk).update(started_at=start - timedelta(minutes=5))
        blocks = Block.objects.filter(timeline=timeline)
        blocks.filter(seq__lte=before_last_turn).update(created_at=start - timedelta(minutes=4))
        blocks.filter(seq__gt=before_last_turn).update(created_at=start + timedelta(seconds=60))
        Compaction.objects.filter(timeline=timeline).update(
            started_at=start + timedelta(seconds=20), finished_at=start + timedelta(seconds=25)
        )

    def cache_demo_turn(self, timeline: Timeline, number: int) -> None:
        turn_id = f"turn_trip_{number:02d}"
        turn_start(timeline=timeline, turn_id=turn_id, prompt=f"Leg {number}: which train should I take?")
        call_id = f"tc_trip_{number:02d}"
        blocks_append(
            timeline=timeline,
            blocks=[
                *tool_call_blocks(
                    turn_id=turn_id,
                    tool_call_id=call_id,
                    tool_id="rail.search",
                    params={"leg": number},
                    result={"tool_id": "rail.search", "tool_call_id": call_id, "result": FILLER * 4},
                    note="Searching the timetable",
                ),
                NewBlock(
                    type=b.ASSISTANT_COMPLETION,
                    author="assistant",
                    turn_id=turn_id,
                    text=f"For leg {number}, take the 09:{number:02d} regional train.",
                ),
            ],
        )


def _fresh(timeline: Timeline) -> Timeline:
    timeline.refresh_from_db()
    return timeline
