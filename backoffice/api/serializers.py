"""Serializer pieces every app's API uses."""

from collections.abc import Mapping
from decimal import Decimal

from django.core.validators import RegexValidator
from django.db import models
from rest_framework import serializers

from backoffice.text import DECIMAL_TEXT, DECIMAL_TEXT_MESSAGE


class ExactDecimalField(serializers.DecimalField):
    """A decimal read exactly as sent: a string of ASCII digits, or a JSON number the project's
    parser read exactly (an int or a Decimal; never a binary float)."""

    default_error_messages = {
        "not_text": 'Send a decimal number as a string, e.g. "10.50".',
        "not_ascii_decimal": DECIMAL_TEXT_MESSAGE,
    }

    def to_internal_value(self, data):
        if isinstance(data, bool | float):
            self.fail("not_text")
        if isinstance(data, str):
            if not DECIMAL_TEXT.fullmatch(data.strip()):
                self.fail("not_ascii_decimal")
        elif not isinstance(data, int | Decimal):
            self.fail("not_text")
        return super().to_internal_value(data)


class StrictCharField(serializers.CharField):
    """Text only: a number or a boolean where text is expected is an error, not its str()."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictSlugField(StrictCharField, serializers.SlugField):
    pass


class LengthFirstListField(serializers.ListField):
    """A list whose length is checked before its items: DRF checks every item first, so a body of a
    million items would cost a million checks (and an error for each) before it is found too long."""

    def to_internal_value(self, data):
        if isinstance(data, list) and self.max_length is not None and len(data) > self.max_length:
            self.fail("max_length", max_length=self.max_length)
        return super().to_internal_value(data)


class StrictInputMixin:
    """An unknown or read-only field in the input is an error, not silently dropped: a typo such as
    ``banker_multipler`` must not look like an accepted change. A model serializer's decimals are
    read exactly (ExactDecimalField)."""

    serializer_field_mapping = {
        **serializers.ModelSerializer.serializer_field_mapping, models.DecimalField: ExactDecimalField,
        models.CharField: StrictCharField, models.TextField: StrictCharField, models.SlugField: StrictSlugField,
    }

    def to_internal_value(self, data):
        if isinstance(data, Mapping):
            writable = {name for name, field in self.fields.items() if not field.read_only}
            unknown = sorted(set(data) - writable)
            if unknown:
                raise serializers.ValidationError({
                    name: ["This field cannot be changed." if name in self.fields else "Unknown field."]
                    for name in unknown
                })
        return super().to_internal_value(data)


# Some character other than white space, and no NUL (the schema states what trimming checks).
REASON_PATTERN = r"^[^\x00]*[^\s\x00][^\x00]*$"


def reason_field(**kwargs) -> StrictCharField:
    kwargs.setdefault("help_text", "Why; recorded in the audit trail (not only spaces).")
    return StrictCharField(allow_blank=False, trim_whitespace=True, min_length=1, max_length=2000,
                           validators=[RegexValidator(REASON_PATTERN)], **kwargs)
