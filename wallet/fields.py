from django.db import models

from wallet.validators import MONEY_DECIMAL_PLACES, MONEY_MAX_DIGITS


def money_field(verbose_name: str, **kwargs) -> models.DecimalField:
    return models.DecimalField(
        verbose_name, max_digits=MONEY_MAX_DIGITS, decimal_places=MONEY_DECIMAL_PLACES, **kwargs
    )
