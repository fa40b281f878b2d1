from django.db import models

from core.currencies import trimmed
from wallet.validators import MONEY_DECIMAL_PLACES, MONEY_MAX_DIGITS


class MoneyField(models.DecimalField):
    """An amount of money: up to 8 places in the column, its currency's in every value
    (core.currencies); the API writes it at its currency's places (wallet.api.serializers).

    Read with the places it needs and at least two (10.01, not the column's 10.01000000; 0.00, not
    0E-8), as every amount was read when the columns had two: pages, logs and audit events that
    write an amount as it is keep writing it so."""

    def from_db_value(self, value, expression, connection):
        return None if value is None else trimmed(value)


def money_field(verbose_name: str, **kwargs) -> MoneyField:
    return MoneyField(verbose_name, max_digits=MONEY_MAX_DIGITS, decimal_places=MONEY_DECIMAL_PLACES, **kwargs)
