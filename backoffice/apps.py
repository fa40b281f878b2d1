from django.apps import AppConfig


class BackOfficeConfig(AppConfig):
    """Presentation infrastructure shared by every app (no models): the admin site and its base
    classes, the API's base view, errors, parsers, pagination and permissions, and the roles."""

    name = "backoffice"
    verbose_name = "Back-office"

    def ready(self):
        from django.apps import apps
        from django.db.models.signals import post_migrate
        from django.urls import register_converter

        from backoffice.api import schema  # noqa: F401 - registers the schema's field extensions
        from backoffice.converters import IdConverter
        from backoffice.roles import sync_role_groups

        register_converter(IdConverter, "id")  # <id:round_id> in every app's routes

        from django.contrib.auth.signals import user_logged_in, user_login_failed

        from backoffice import lockout

        user_login_failed.connect(lockout.record_failure, dispatch_uid="backoffice.lockout.failure")
        user_logged_in.connect(lockout.clear_failures, dispatch_uid="backoffice.lockout.success")

        from backoffice.staff_sessions import stamp_session

        # Stamps the new session with its start and its user's grants (sessions that end).
        user_logged_in.connect(stamp_session, dispatch_uid="backoffice.staff_sessions.stamp")

        def sync_roles(sender, **kwargs):
            sync_role_groups(apps)

        # After every app's post_migrate, not only this one's: the permissions of apps migrated
        # later (created by their own post_migrate) must reach the groups too.
        post_migrate.connect(sync_roles, weak=False, dispatch_uid="backoffice.sync_role_groups")
