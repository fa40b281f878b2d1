"""backoffice.formatting in templates: ``{{ amount|money }}`` writes "58,131.40"."""

from django import template

from backoffice import formatting

register = template.Library()


@register.filter
def money(value, currency: str = "") -> str:
    return formatting.money(value, currency)
