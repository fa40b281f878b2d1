from django.apps import AppConfig


class ApiTokensConfig(AppConfig):
    """API tokens kept as keyed digests, with an owner, scopes, an expiry and allowed addresses."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "apitokens"
    verbose_name = "API tokens"

    def ready(self):
        from apitokens import receivers

        receivers.connect()
