from django.apps import AppConfig


class GamesConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "games"
    verbose_name = "Games"

    def ready(self):
        from audit import partitioning
        from games.models import Bet
        from games.selectors import bets_archive_hold

        partitioning.ARCHIVE_HOLDS[Bet._meta.db_table] = bets_archive_hold
