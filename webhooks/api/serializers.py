from rest_framework import serializers

from backoffice.api.serializers import StrictInputMixin
from webhooks.choices import EventType
from webhooks.models import Delivery, Endpoint
from webhooks.validators import validate_endpoint_url


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


class EndpointInputSerializer(StrictInputMixin, serializers.Serializer):
    url = serializers.CharField(max_length=500, validators=[validate_endpoint_url])
    events = serializers.ListField(child=serializers.ChoiceField(choices=EventType.choices), min_length=1)
    description = serializers.CharField(max_length=200, required=False, allow_blank=True)
    active = serializers.BooleanField(required=False)

    def validate_events(self, value):
        return list(dict.fromkeys(value))  # each event once, in the order first named


class SecretSerializer(serializers.Serializer):
    secret = serializers.CharField(help_text="The new signing secret; the previous one keeps signing for a while.")


class DeliverySerializer(serializers.ModelSerializer):
    event_id = serializers.UUIDField(source="event.pk")
    event_type = serializers.CharField(source="event.type")

    class Meta:
        model = Delivery
        fields = ["id", "event_id", "event_type", "endpoint", "status", "attempts", "next_attempt_at",
                  "delivered_at", "last_error"]
        read_only_fields = fields
