"""Serializer pieces every app's API uses."""

from collections.abc import Mapping

from rest_framework import serializers


class StrictInputMixin:
    """An unknown or read-only field in the input is an error, not silently dropped: a typo such as
    ``banker_multipler`` must not look like an accepted change."""

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


def reason_field(**kwargs) -> serializers.CharField:
    kwargs.setdefault("help_text", "Why; recorded in the audit trail.")
    return serializers.CharField(allow_blank=False, trim_whitespace=True, max_length=2000, **kwargs)
