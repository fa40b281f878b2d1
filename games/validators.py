"""Field validators shared by the models, the API serializers and the admin forms."""

from decimal import Decimal

from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator

from games.engine import MAX_DECKS, MIN_DECKS, multiplier_problem

MONEY_MAX_DIGITS = 14
MONEY_DECIMAL_PLACES = 2
MULTIPLIER_MAX_DIGITS = 8  # up to 1000.0000
MULTIPLIER_DECIMAL_PLACES = 4

validate_currency = RegexValidator(r"^[A-Z]{3}\Z", "Enter an ISO 4217 code: three capital letters.")


def validate_multiplier(value) -> None:
    problem = multiplier_problem(value if not isinstance(value, float) else str(value))
    if problem:
        raise ValidationError(f"A multiplier {problem}.", code="invalid_multiplier")


def validate_decks(value) -> None:
    if not MIN_DECKS <= value <= MAX_DECKS:
        raise ValidationError(f"A shoe holds {MIN_DECKS} to {MAX_DECKS} decks.", code="invalid_decks")


def validate_positive_money(value: Decimal) -> None:
    if value <= 0:
        raise ValidationError("Must be greater than zero.", code="not_positive")
    if value.as_tuple().exponent < -MONEY_DECIMAL_PLACES:
        raise ValidationError(
            f"Must have at most {MONEY_DECIMAL_PLACES} decimal places.", code="too_many_places"
        )
