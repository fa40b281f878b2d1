"""The rules of money, shared by every model, serializer and form that holds an amount.

The range of money is decided here, on purpose:

- ``MAX_BALANCE`` is the most a deposit or adjustment may bring an account to, and the largest
  single adjustment; beyond it the answer is a 400 naming the field.
- ``MAX_STAKE`` is the largest stake any game may take (a game's ``max_bet`` is at most this).
- Winnings are always paid, even past ``MAX_BALANCE``: a regulated operator never withholds a win
  because of a limit of its own. The columns hold ``MONEY_MAX_DIGITS`` digits, so an account at
  ``MAX_BALANCE`` can still be paid more than a million of the largest wins
  (``MAX_STAKE`` × the largest multiplier) before a column could overflow; refunds and
  adjustments within the limits can never overflow it.
"""

from decimal import Decimal

from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator

MONEY_DECIMAL_PLACES = 2
MONEY_MAX_DIGITS = 20  # NUMERIC(20, 2): up to 10^18 - 0.01
MAX_BALANCE = Decimal("999999999999.99")  # just under a trillion in the account's currency
MAX_STAKE = Decimal("1000000.00")  # a million in the game's currency, per bet

CURRENCY_PATTERN = r"^[A-Z]{3}\Z"
# The same rule as a database CHECK (PostgreSQL's regexes read "$" as the end).
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


def validate_stake(value: Decimal) -> None:
    """A stake or bet limit: positive, cents, at most ``MAX_STAKE``."""
    validate_positive_money(value)
    if value > MAX_STAKE:
        raise ValidationError(f"Must be at most {MAX_STAKE}.", code="above_max_stake")


def validate_adjustment(value: Decimal) -> None:
    """A manual credit or debit: non-zero, cents, at most ``MAX_BALANCE`` either way."""
    if value == 0:
        raise ValidationError("Must not be zero.", code="zero")
    validate_money_places(value)
    if abs(value) > MAX_BALANCE:
        raise ValidationError(f"Must be at most {MAX_BALANCE} either way.", code="above_max_balance")
