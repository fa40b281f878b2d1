from rest_framework import serializers

from alerts.choices import AlertKind, AlertSeverity, AlertStatus, IncidentStatus
from alerts.models import Alert, Incident


class AlertSerializer(serializers.ModelSerializer):
    acknowledged_by = serializers.CharField(source="acknowledged_by.get_username", default=None, read_only=True)
    resolved_by = serializers.CharField(source="resolved_by.get_username", default=None, read_only=True)

    class Meta:
        model = Alert
        fields = ["id", "kind", "key", "severity", "status", "message", "details", "first_seen", "last_seen",
                  "times_seen", "acknowledged_by", "acknowledged_at", "acknowledge_note", "resolved_by",
                  "resolved_at", "resolve_note"]
        read_only_fields = fields


class AlertFilterSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=AlertStatus.choices, required=False)
    kind = serializers.ChoiceField(choices=AlertKind.choices, required=False)
    severity = serializers.ChoiceField(choices=AlertSeverity.choices, required=False)


class AlertNoteSerializer(serializers.Serializer):
    note = serializers.CharField(max_length=2000)


class IncidentAlertSerializer(serializers.ModelSerializer):
    class Meta:
        model = Alert
        fields = ["id", "kind", "key", "severity", "status", "message", "first_seen", "resolved_at"]
        read_only_fields = fields


class IncidentSerializer(serializers.ModelSerializer):
    restored_by = serializers.CharField(source="restored_by_actor", read_only=True,
                                        help_text="The user who resolved its last alert, or system:alerts.")
    alerts = IncidentAlertSerializer(many=True, read_only=True)

    class Meta:
        model = Incident
        fields = ["id", "opened_at", "cause", "status", "restored_at", "restored_by", "alerts"]
        read_only_fields = fields


class IncidentFilterSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=IncidentStatus.choices, required=False)
