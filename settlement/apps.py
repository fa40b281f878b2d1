from django.apps import AppConfig


class SettlementConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "settlement"
    verbose_name = "Settlement"

    def ready(self):
        from django.contrib import admin

        from settlement.dashboard import install

        # The operations dashboard and the non-counting lists, on the admin site (after autodiscover).
        install(admin.site)
