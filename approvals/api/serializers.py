from rest_framework import serializers

from approvals.choices import ApprovalAction, ApprovalStatus
from approvals.models import Approval
from backoffice.api.serializers import StrictInputMixin


class ApprovalSerializer(serializers.ModelSerializer):
    status = serializers.ChoiceField(source="current_status", choices=ApprovalStatus.choices, read_only=True)
    title = serializers.CharField(read_only=True, help_text='The request as people say it, as the admin shows it: '
                                  '"Adjust account player-7 by −120.00 EUR".')
    proposed_by = serializers.CharField(source="proposed_by.get_username", read_only=True)
    decided_by = serializers.CharField(source="decided_by.get_username", read_only=True, allow_null=True,
                                       default=None)

    class Meta:
        model = Approval
        fields = ["id", "title", "status", "action", "object_type", "object_id", "proposed_by", "proposed_at", "reason",
                  "changes", "expires_at", "decided_by", "decided_at", "decision_reason"]
        read_only_fields = fields


class ApprovalHeldSerializer(serializers.Serializer):
    """The 202 answer of a request that waits for a second person."""

    approval = ApprovalSerializer()


class ApprovalFilterSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=ApprovalStatus.choices, required=False)
    action = serializers.ChoiceField(choices=ApprovalAction.choices, required=False)
    object_type = serializers.ChoiceField(choices=["gameinstance", "account", "round"], required=False)
    object_id = serializers.RegexField(r"^[0-9]{1,18}$", required=False)


class ApprovalDecisionSerializer(StrictInputMixin, serializers.Serializer):
    reason = serializers.CharField(max_length=1000)


class ApprovalAppliedSerializer(serializers.Serializer):
    approval = ApprovalSerializer()
    result = serializers.JSONField(help_text="The applied object: the game, the adjustment, or the voided round.")
