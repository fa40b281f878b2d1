"""The rules of money, shared by every model, serializer and form that holds an amount.

The range of money is decided here, on purpose:

- ``MAX_BALANCE`` is the most a deposit or adjustment may bring an account to, and the largest
  single adjustment; beyond it the answer is a 400 naming the field.
- ``MAX_STAKE`` is the largest stake any game may take (a game's ``max_bet`` is at most this).
- Winnings are always paid, even past ``MAX_BALANCE``: a regulated operator never withholds a win
  because of a limit of its own. The columns hold ``MONEY_MAX_DIGITS`` digits, 18 of them before
  the point, so an account at ``MAX_BALANCE`` can still be paid more than a million of the largest
  wins (``MAX_STAKE`` × the largest multiplier) before a column could overflow; refunds and
  adjustments within the limits can never overflow it.
- The columns hold ``MONEY_DECIMAL_PLACES`` (8) places, the most any currency may have; an amount
  has at most its own currency's places (core.currencies: JPY 0, USD 2, KWD 3, BTC as configured).
"""

from decimal import Decimal

from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator

from core.currencies import CURRENCY_RULE, MAX_PLACES, places_problem, validate_known_currency

MONEY_DECIMAL_PLACES = MAX_PLACES
MONEY_MAX_DIGITS = 18 + MONEY_DECIMAL_PLACES  # NUMERIC(26, 8): up to 10^18 - 10^-8
MAX_BALANCE = Decimal("999999999999.99")  # just under a trillion in the account's currency
MAX_STAKE = Decimal("1000000.00")  # a million in the game's currency, per bet

# The shape of a currency code: ISO 4217's three capital letters, or a configured code of 3 to 8
# capital letters or digits. Whether the code is known is validate_known_currency's (core.currencies).
CURRENCY_MAX_LENGTH = 8
CURRENCY_PATTERN = r"^[A-Z][A-Z0-9]{2,7}\Z"
# The same rule as a database CHECK (PostgreSQL's regexes read "$" as the end).
CURRENCY_CHECK_PATTERN = r"^[A-Z][A-Z0-9]{2,7}$"

_currency_shape = RegexValidator(CURRENCY_PATTERN, f"Enter {CURRENCY_RULE}.")


def validate_currency(value) -> None:
    _currency_shape(value)
    validate_known_currency(value)


def validate_in_currency(value: Decimal, currency: str) -> None:
    """An amount with no more places than its currency has (JPY 100, not 100.5)."""
    problem = places_problem(value, currency)
    if problem:
        raise ValidationError(problem, code="too_many_places_for_currency")


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
    """A stake or bet limit: positive, at most 8 places (its currency's are checked with the game), at
    most ``MAX_STAKE``."""
    validate_positive_money(value)
    if value > MAX_STAKE:
        raise ValidationError(f"Must be at most {MAX_STAKE}.", code="above_max_stake")


def validate_adjustment(value: Decimal) -> None:
    """A manual credit or debit: non-zero, at most 8 places (the account's currency's are checked by
    the service), at most ``MAX_BALANCE`` either way."""
    if value == 0:
        raise ValidationError("Must not be zero.", code="zero")
    validate_money_places(value)
    if abs(value) > MAX_BALANCE:
        raise ValidationError(f"Must be at most {MAX_BALANCE} either way.", code="above_max_balance")
