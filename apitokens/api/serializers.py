from django.core.validators import RegexValidator
from rest_framework import serializers

from apitokens.choices import Scope
from apitokens.models import LABEL_MESSAGE, MISLEADING_LABEL_CHARACTERS, ApiToken
from apitokens.services import MAX_ALLOWED_IPS
from backoffice.api.serializers import ExactDecimalField, LengthFirstListField, StrictCharField, StrictInputMixin


class ApiTokenSerializer(serializers.ModelSerializer):
    """A token as listed: never the token, only its visible prefix."""

    owner = serializers.CharField(source="owner.username", read_only=True)
    scopes = serializers.ListField(child=serializers.ChoiceField(choices=Scope.choices))
    allowed_ips = serializers.ListField(child=serializers.CharField())

    class Meta:
        model = ApiToken
        fields = ["id", "owner", "label", "prefix", "scopes", "expires_at", "allowed_ips", "enabled", "created_at",
                  "last_used_at"]
        read_only_fields = fields


class ApiTokenCreatedSerializer(serializers.Serializer):
    api_token = ApiTokenSerializer()
    token = serializers.CharField(help_text="The token itself, shown this once: only its digest is kept.")


class ApiTokenInputSerializer(StrictInputMixin, serializers.Serializer):
    owner = StrictCharField(max_length=150, help_text="The user name of the token's owner.")
    scopes = serializers.ListField(child=serializers.ChoiceField(choices=Scope.choices), min_length=1,
                                   default=[Scope.READ.value],
                                   help_text="read; bets (open rounds, bet, bulk, deal); write (everything the "
                                             "owner's role may do). A read-only role's token reads only.")
    expires_at = serializers.DateTimeField(required=False, allow_null=True,
                                           help_text="Default: STAFF_TOKEN_DAYS for staff, never for a game server.")
    allowed_ips = LengthFirstListField(child=StrictCharField(max_length=49), required=False, default=list,
                                       max_length=MAX_ALLOWED_IPS, help_text="CIDRs the client must be in.")
    label = StrictCharField(max_length=100, required=False, default="", allow_blank=True, trim_whitespace=False,
                            validators=[RegexValidator(f"^[^{MISLEADING_LABEL_CHARACTERS[1:-1]}]*$", LABEL_MESSAGE)],
                            help_text="No control characters or bidirectional overrides.")


class ApiTokenListQuerySerializer(serializers.Serializer):
    owner = serializers.CharField(max_length=150, required=False, help_text="Only this user's tokens.")


class ApiTokenRotateSerializer(StrictInputMixin, serializers.Serializer):
    overlap_hours = ExactDecimalField(required=False, max_digits=6, decimal_places=3, min_value=0, max_value=720,
                                           help_text="How long the old token keeps working "
                                                     "(default API_TOKEN_ROTATION_OVERLAP_HOURS).")
