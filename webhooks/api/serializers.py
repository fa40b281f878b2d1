from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from backoffice.api.serializers import StrictCharField, StrictInputMixin, reason_field
from webhooks.choices import EventType
from webhooks.models import Delivery, Endpoint
from webhooks.services import error_for_client
from webhooks.validators import URL_MAX_LENGTH, endpoint_url_pattern, endpoint_url_rule_text, validate_endpoint_url

DESCRIPTION_MAX_LENGTH = 200


class EndpointSerializer(serializers.ModelSerializer):
    class Meta:
        model = Endpoint
        fields = ["id", "url", "events", "description", "active", "created_at"]
        read_only_fields = fields


class EndpointCreatedSerializer(EndpointSerializer):
    secret = serializers.CharField(help_text="The signing secret: shown this once.")

    class Meta(EndpointSerializer.Meta):
        fields = [*EndpointSerializer.Meta.fields, "secret"]
        read_only_fields = fields


class EndpointUrlField(StrictCharField):
    """A URL under the rule of webhooks.validators, taken as sent (not trimmed)."""

    def __init__(self, **kwargs):
        super().__init__(max_length=URL_MAX_LENGTH, trim_whitespace=False, validators=[validate_endpoint_url],
                         **kwargs)


class EndpointUrlFieldExtension(OpenApiSerializerFieldExtension):
    """The schema states the rule itself: its pattern is built from the same settings as the validator."""

    target_class = EndpointUrlField

    def map_serializer_field(self, auto_schema, direction):
        return {"type": "string", "maxLength": URL_MAX_LENGTH, "pattern": endpoint_url_pattern(),
                "description": endpoint_url_rule_text()}


class StrictBooleanField(serializers.BooleanField):
    """true or false only: not "yes", 1 or "on", which the schema's boolean does not allow."""

    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.fail("invalid", input=data)
        return data


# drf-spectacular states a blank-allowing field as oneOf [this, ""]: this must not match "" itself.
@extend_schema_field({"type": "string", "maxLength": DESCRIPTION_MAX_LENGTH, "pattern": "^[^\\x00]+$"})
class DescriptionField(StrictCharField):
    """Kept as written: empty, or any text without NUL (refused by CharField) of up to 200 characters."""

    def __init__(self, **kwargs):
        super().__init__(max_length=DESCRIPTION_MAX_LENGTH, allow_blank=True, trim_whitespace=False, **kwargs)


class EndpointInputSerializer(StrictInputMixin, serializers.Serializer):
    url = EndpointUrlField()
    events = serializers.ListField(child=serializers.ChoiceField(choices=EventType.choices), min_length=1,
                                   help_text="One or more; an event named twice is subscribed once.")
    description = DescriptionField(required=False)
    active = StrictBooleanField(required=False, help_text="Whether events are delivered (default true).")

    def validate_events(self, value):
        return list(dict.fromkeys(value))  # each event once, in the order first named


class EndpointCreateSerializer(EndpointInputSerializer):
    reason = reason_field(help_text="Why the endpoint is registered; recorded in the audit trail (not only spaces).")


class SecretSerializer(serializers.Serializer):
    secret = serializers.CharField(help_text="The new signing secret; the previous one keeps signing for a while.")


class ClientErrorField(serializers.CharField):
    """The last error as the client may read it (webhooks.services.error_for_client); staff see the
    detail in the admin."""

    def to_representation(self, value):
        return error_for_client(value)


class DeliverySerializer(serializers.ModelSerializer):
    event_id = serializers.UUIDField(source="event.pk")
    event_type = serializers.CharField(source="event.type")
    last_error = ClientErrorField(read_only=True, help_text=(
        "Why the last attempt failed: HTTP <status> of your server's answer, a timeout, a cancellation, or "
        "one generic reason for a destination refused or not reached (the operator sees the detail)."))

    class Meta:
        model = Delivery
        fields = ["id", "event_id", "event_type", "endpoint", "status", "attempts", "next_attempt_at",
                  "delivered_at", "last_error"]
        read_only_fields = fields
