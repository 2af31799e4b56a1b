from django.apps import AppConfig
from django.core import checks
from django.core.signals import request_finished
from django.db.backends.signals import connection_created
from django.db.models.signals import post_migrate, pre_migrate


class TimelineAppConfig(AppConfig):
    name = "timeline_app"
    verbose_name = "Timelines"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Django's rule: models (which roles imports) are importable only once the registry is ready.
        from timeline_app import (
            tasks,  # noqa: F401
            tenancy,
        )
        from timeline_app.roles import create_roles_after_migrate

        # Every process registers the Celery tasks: services enqueue them by name from Celery's
        # registry (services.compaction.background.compaction_enqueue), and only a worker autodiscovers.

        # The admin roles (support, operator) and their permissions, idempotently, no migration.
        post_migrate.connect(
            create_roles_after_migrate, sender=self, dispatch_uid="timeline_app.roles.create_roles"
        )
        # Row-level security (issue 26): a persistent connection carries no request's tenant into
        # the next one, and migrations see every tenant.
        request_finished.connect(
            tenancy.clear_when_request_finishes, dispatch_uid="timeline_app.tenancy.clear"
        )
        pre_migrate.connect(tenancy.widen_for_migrations, dispatch_uid="timeline_app.tenancy.widen")
        post_migrate.connect(tenancy.clear_after_migrations, dispatch_uid="timeline_app.tenancy.narrow")
        # Superusers and BYPASSRLS roles skip every policy: a WARNING at the process's first
        # connection, and a `check --deploy` warning (docs/operations.md "Roles").
        connection_created.connect(
            tenancy.warn_if_policies_bypassed, dispatch_uid="timeline_app.tenancy.bypass"
        )
        checks.register(tenancy.check_role_is_subject_to_policies, checks.Tags.security, deploy=True)
