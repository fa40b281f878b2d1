from django.apps import AppConfig


class SettlementConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "settlement"
    verbose_name = "Settlement"

    def ready(self):
        from settlement import receivers

        receivers.connect()
