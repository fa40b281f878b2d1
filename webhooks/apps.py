from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "webhooks"
    verbose_name = "Webhooks"

    def ready(self):
        from webhooks import receivers

        receivers.connect()
