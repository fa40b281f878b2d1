from django.apps import AppConfig


class WalletConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "wallet"
    verbose_name = "Wallet"

    def ready(self):
        # The API's reading and writing of money (MoneyDecimalField), for every model serializer.
        from wallet.api import serializers  # noqa: F401
