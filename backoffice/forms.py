"""Form fields every admin form uses."""

from django import forms
from django.core.exceptions import ValidationError

from backoffice.text import DECIMAL_TEXT, DECIMAL_TEXT_MESSAGE


class ExactDecimalFormField(forms.DecimalField):
    """A decimal read exactly as typed, in ASCII digits (no "１０", "1_000" or "1e3")."""

    def to_python(self, value):
        number = super().to_python(value)  # "Enter a number." for what is no number at all
        if number is not None and number.is_finite() and not DECIMAL_TEXT.fullmatch(str(value).strip()):
            raise ValidationError(DECIMAL_TEXT_MESSAGE, code="invalid")
        return number
