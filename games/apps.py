from django.apps import AppConfig


class GamesConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "games"
    verbose_name = "Games"

    def ready(self):
        from django.apps import apps
        from django.db.models.signals import post_migrate

        from games import signals
        from games.roles import sync_role_groups

        signals.connect()

        def sync_roles(sender, **kwargs):
            sync_role_groups(apps)

        # After every app's post_migrate, not only this one's: the permissions of apps migrated
        # later (created by their own post_migrate) must reach the groups too.
        post_migrate.connect(sync_roles, weak=False, dispatch_uid="games.sync_role_groups")
