from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from timeline_app import tenancy
from timeline_app.services.api_keys import api_key_revoke


class Command(BaseCommand):
    help = "Revoke an API key, named by the whole key or its printed prefix."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("key", help="the key or its prefix (first 12 characters)")

    def handle(self, *args: Any, **options: Any) -> None:
        with tenancy.tenant_scope_all():  # a management command: every tenant (row-level security)
            self._handle(**options)

    def _handle(self, **options: Any) -> None:
        count = api_key_revoke(prefix=options["key"])
        if count == 0:
            raise CommandError("no active key matches")
        self.stdout.write(f"Revoked {count} key(s).")
