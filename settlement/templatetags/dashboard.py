"""Number formats of the operations dashboard: thousands separated, amounts at their currency's places
(settlement.reports gives each amount at them: JPY none, USD two, KWD three)."""

from decimal import Decimal

from django import template

from backoffice.formatting import EMPTY

register = template.Library()


@register.filter
def amount(value) -> str:
    """Decimal("12345.60") → "12,345.60", Decimal("12345") (yen) → "12,345"."""
    if value is None or value == "":
        return EMPTY
    value = Decimal(value)
    return f"{value:,.{max(0, -value.as_tuple().exponent)}f}"


@register.filter
def count(value) -> str:
    """1234567 → "1,234,567"."""
    if value is None or value == "":
        return EMPTY
    return f"{int(value):,}"
