"""Amounts of money as the services take them: decimal strings, never floats."""

from collections.abc import Callable
from decimal import Decimal, InvalidOperation

from django.core.exceptions import ValidationError

from core.currencies import minor_places, places_in


def parse_money(value, *, field: str, validator: Callable[[Decimal], None] | None = None) -> Decimal:
    """``value`` (a decimal string, an int or a Decimal) as a finite Decimal that ``validator`` accepts;
    a ValidationError naming ``field`` otherwise. A float (or a bool) is refused: a float has lost the
    exact cents already (0.1 + 0.2), so the amount must come as a string."""
    if isinstance(value, float | bool):
        raise ValidationError({field: f'Send the {field.replace("_", " ")} as a decimal string, e.g. "10.50".'})
    try:
        amount = Decimal(str(value))
    except InvalidOperation:
        raise ValidationError({field: "Must be a decimal number."}) from None
    if not amount.is_finite():
        raise ValidationError({field: "Must be a finite number."})
    if validator is not None:
        try:
            validator(amount)
        except ValidationError as error:
            raise ValidationError({field: error.messages}) from None
    return amount


def money_text(amount, currency: str = "", *, signed: bool = False) -> str:
    """An amount as people read it: thousands separated, its currency's places (core.currencies:
    USD two, JPY none, KWD three; without a currency, the places it needs and at least two), its
    currency, a true minus sign: Decimal("-58131.4"), "USD" → "−58,131.40 USD"; signed=True writes
    "+" before a credit."""
    amount = Decimal(str(amount))
    places = max(minor_places(currency), places_in(amount)) if currency else max(2, places_in(amount))
    sign = "−" if amount < 0 else ("+" if signed and amount > 0 else "")
    text = f"{sign}{abs(amount):,.{places}f}"
    return f"{text} {currency}" if currency else text
