from rest_framework import serializers

from audit.models import AuditEvent


class AuditHeadSerializer(serializers.Serializer):
    id = serializers.IntegerField(allow_null=True, help_text="The newest event's id; null while the log is empty.")
    hash = serializers.CharField(help_text="The newest event's SHA-256 chain hash (64 zeros while the log is empty).")
    created_at = serializers.DateTimeField(allow_null=True)


class AuditEventSerializer(serializers.ModelSerializer):
    actor_user = serializers.IntegerField(source="actor_user_id", read_only=True, allow_null=True,
                                          help_text="The staff or client user's id; null for the system.")

    class Meta:
        model = AuditEvent
        fields = ["id", "created_at", "actor", "actor_user", "action", "object_type", "object_id", "before",
                  "after", "reason", "request_id", "source_ip", "prev_hash", "hash"]
        read_only_fields = fields


class AuditEventFilterSerializer(serializers.Serializer):
    action = serializers.CharField(required=False, max_length=64, help_text="Exact, e.g. round.voided.")
    object_type = serializers.CharField(required=False, max_length=64, help_text="Exact, e.g. round.")
    object_id = serializers.CharField(required=False, max_length=64, help_text="Exact.")
    request_id = serializers.CharField(required=False, max_length=64, help_text="Exact (X-Request-ID).")
