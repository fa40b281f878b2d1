from rest_framework import serializers

from audit.choices import AuthOutcome
from audit.models import AuditEvent


class SignedHeadSerializer(serializers.Serializer):
    tree_size = serializers.IntegerField(help_text="The events the head covers: the log's first tree_size leaves.")
    root_hash = serializers.CharField(help_text="RFC 6962 Merkle root of those leaves, hex.")
    timestamp = serializers.IntegerField(help_text="Milliseconds since 1970-01-01 UTC.")
    signature = serializers.CharField(help_text="Ed25519 over the RFC 6962 TreeHeadSignature, base64.")
    key_id = serializers.CharField(help_text="SHA-256 of the raw public key, hex.")


class AuditLogStatusSerializer(serializers.Serializer):
    head = SignedHeadSerializer(allow_null=True, help_text="The latest signed tree head; null before the first.")
    public_key = serializers.CharField(help_text="Ed25519 public key checking every head, base64 (raw).")
    key_id = serializers.CharField()
    tree_size = serializers.IntegerField(help_text="Events sequenced into the log so far.")
    pending = serializers.IntegerField(help_text="Events written but not yet sequenced (within about a second).")


class InclusionProofSerializer(serializers.Serializer):
    event_id = serializers.IntegerField()
    leaf_index = serializers.IntegerField()
    tree_size = serializers.IntegerField()
    entry = serializers.CharField(help_text="The event's canonical entry; its leaf hash is SHA-256(0x00 ‖ entry).")
    leaf_hash = serializers.CharField()
    audit_path = serializers.ListField(child=serializers.CharField(), help_text="RFC 6962 audit path, hex.")
    root_hash = serializers.CharField()
    head = SignedHeadSerializer(allow_null=True, help_text="The signed head of this tree size, if one was made.")


class ConsistencyProofSerializer(serializers.Serializer):
    first = serializers.IntegerField()
    second = serializers.IntegerField()
    first_root_hash = serializers.CharField()
    second_root_hash = serializers.CharField()
    proof = serializers.ListField(child=serializers.CharField(), help_text="RFC 6962 consistency proof, hex.")
    first_head = SignedHeadSerializer(allow_null=True)
    second_head = SignedHeadSerializer(allow_null=True)


BIGINT_MAX = 2**63 - 1  # PostgreSQL's bigint: beyond it a lookup is refused here, not by the database


class InclusionQuerySerializer(serializers.Serializer):
    event_id = serializers.IntegerField(min_value=1, max_value=BIGINT_MAX)
    tree_size = serializers.IntegerField(min_value=1, max_value=BIGINT_MAX, required=False,
                                         help_text="Default: the latest signed head's.")


class ConsistencyQuerySerializer(serializers.Serializer):
    first = serializers.IntegerField(min_value=0, max_value=BIGINT_MAX)
    second = serializers.IntegerField(min_value=0, max_value=BIGINT_MAX, required=False,
                                      help_text="Default: the latest signed head's.")


class AuditEventSerializer(serializers.ModelSerializer):
    actor_user = serializers.IntegerField(source="actor_user_id", read_only=True, allow_null=True,
                                          help_text="The staff or client user's id; null for the system.")
    leaf_index = serializers.IntegerField(read_only=True, allow_null=True,
                                          help_text="Its position in the Merkle log; null while pending.")
    covered_by_head = serializers.IntegerField(read_only=True, allow_null=True,
                                               help_text="Tree size of the first signed head covering it.")

    class Meta:
        model = AuditEvent
        fields = ["id", "created_at", "actor", "actor_user", "action", "object_type", "object_id", "before",
                  "after", "reason", "request_id", "source_ip", "leaf_index", "covered_by_head", "prev_hash", "hash"]
        read_only_fields = fields


class AuditEventFilterSerializer(serializers.Serializer):
    action = serializers.CharField(required=False, max_length=64, help_text="Exact, e.g. round.voided.")
    object_type = serializers.CharField(required=False, max_length=64, help_text="Exact, e.g. round.")
    object_id = serializers.CharField(required=False, max_length=64, help_text="Exact.")
    request_id = serializers.CharField(required=False, max_length=64, help_text="Exact (X-Request-ID).")


class AuthEventSerializer(serializers.ModelSerializer):
    """An event of the authentication log: never a password, a token or a code."""

    username = serializers.CharField(read_only=True, help_text="The user name tried or concerned (\"\" for an unknown "
                                                               "token).")
    outcome = serializers.CharField(read_only=True, help_text="What became of it (see the outcome filter); blank "
                                                              "for events recorded before the log had outcomes.")
    user_agent = serializers.CharField(read_only=True, help_text="The request's User-Agent (256 characters at most).")
    leaf_index = serializers.IntegerField(read_only=True, allow_null=True,
                                          help_text="Its position in the Merkle log; null while pending.")

    class Meta:
        model = AuditEvent
        fields = ["id", "created_at", "action", "outcome", "username", "actor", "source_ip", "user_agent",
                  "request_id", "leaf_index"]
        read_only_fields = fields


class AuthEventFilterSerializer(serializers.Serializer):
    username = serializers.CharField(required=False, max_length=150, help_text="Exact.")
    outcome = serializers.ChoiceField(required=False, choices=AuthOutcome.choices)
    since = serializers.DateTimeField(required=False, help_text="Events recorded at or after this time (ISO 8601).")
