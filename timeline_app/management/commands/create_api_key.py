from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from timeline_app import tenancy
from timeline_app.services.api_keys import api_key_create


class Command(BaseCommand):
    help = "Create an API key for a tenant (the tenant is created if needed). The key is printed once, last."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", required=True, help="tenant name")
        parser.add_argument("--name", default="", help="a label for the key")

    def handle(self, *args: Any, **options: Any) -> None:
        with tenancy.tenant_scope_all():  # a management command: every tenant (row-level security)
            self._handle(**options)

    def _handle(self, **options: Any) -> None:
        key, raw = api_key_create(tenant_name=options["tenant"], name=options["name"])
        self.stdout.write(
            f"Created API key {key.prefix}… for tenant {key.tenant.name!r}. It is shown only now:"
        )
        self.stdout.write(raw)
