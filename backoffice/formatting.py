"""How pages and reports write numbers and missing values."""

from decimal import Decimal
from fractions import Fraction

EMPTY = "—"  # what a page shows where there is no value


def percent(value, places: int = 2, unit: str = "") -> str:
    """A ratio as a percentage, rounded half-even to ``places`` from its exact value:
    Fraction(4947, 5000) → "98.94"; None → EMPTY."""
    if value is None:
        return EMPTY
    scaled = round(Fraction(value) * 100 * 10**places)
    return f"{Decimal(scaled).scaleb(-places):.{places}f}{unit}"
