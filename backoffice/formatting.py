"""How pages and reports write numbers and missing values."""

from decimal import Decimal
from fractions import Fraction

from django.utils import formats, timezone

from core.money import money_text

EMPTY = "—"  # what a page shows where there is no value


def percent(value, places: int = 2, unit: str = "") -> str:
    """A ratio as a percentage, rounded half-even to ``places`` from its exact value:
    Fraction(4947, 5000) → "98.94"; None → EMPTY."""
    if value is None:
        return EMPTY
    scaled = round(Fraction(value) * 100 * 10**places)
    return f"{Decimal(scaled).scaleb(-places):.{places}f}{unit}"


def timestamp(value) -> str:
    """A moment as every page writes it, to the second with its zone: "2026-11-30 14:11:05 UTC"."""
    if value is None:
        return EMPTY
    return formats.date_format(timezone.localtime(value), "DATETIME_FORMAT")


def money(value, currency: str = "", *, signed: bool = False) -> str:
    """An amount as lists, forms and titles write it (core.money.money_text); None → EMPTY."""
    if value is None:
        return EMPTY
    return money_text(value, currency, signed=signed)
