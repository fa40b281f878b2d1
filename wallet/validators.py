"""The rules of money, shared by every model, serializer and form that holds an amount."""

from decimal import Decimal

from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator

MONEY_MAX_DIGITS = 14
MONEY_DECIMAL_PLACES = 2

CURRENCY_PATTERN = r"^[A-Z]{3}\Z"
# The same rule as a database CHECK (PostgreSQL and SQLite regexes both read "$" as the end).
CURRENCY_CHECK_PATTERN = r"^[A-Z]{3}$"

validate_currency = RegexValidator(CURRENCY_PATTERN, "Enter an ISO 4217 code: three capital letters.")


def validate_money_places(value: Decimal) -> None:
    if value.as_tuple().exponent < -MONEY_DECIMAL_PLACES:
        raise ValidationError(
            f"Must have at most {MONEY_DECIMAL_PLACES} decimal places.", code="too_many_places"
        )


def validate_positive_money(value: Decimal) -> None:
    if value <= 0:
        raise ValidationError("Must be greater than zero.", code="not_positive")
    validate_money_places(value)
