from django.apps import AppConfig


class GamesConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "games"
    verbose_name = "Games"

    def ready(self):
        from audit import partitioning
        from games.selectors import bets_archive_refusal

        if bets_archive_refusal not in partitioning.ARCHIVE_REFUSALS:
            partitioning.ARCHIVE_REFUSALS.append(bets_archive_refusal)
