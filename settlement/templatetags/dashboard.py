"""Number formats of the operations dashboard: thousands separated, amounts with two places."""

from decimal import Decimal

from django import template

from backoffice.formatting import EMPTY

register = template.Library()


@register.filter
def amount(value) -> str:
    """12345.6 → "12,345.60"."""
    if value is None or value == "":
        return EMPTY
    return f"{Decimal(value):,.2f}"


@register.filter
def count(value) -> str:
    """1234567 → "1,234,567"."""
    if value is None or value == "":
        return EMPTY
    return f"{int(value):,}"
