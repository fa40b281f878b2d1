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

        post_migrate.connect(sync_roles, sender=self, dispatch_uid="games.sync_role_groups")
