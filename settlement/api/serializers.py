from rest_framework import serializers

from settlement.models import SettlementBatch


class SettlementBatchSerializer(serializers.ModelSerializer):
    class Meta:
        model = SettlementBatch
        fields = ["id", "worker", "started_at", "finished_at", "rounds", "bets", "total_staked", "total_paid",
                  "round_ids", "outcome", "error"]


class BatchFilterSerializer(serializers.Serializer):
    outcome = serializers.ChoiceField(choices=SettlementBatch.Outcome.choices, required=False)


class SettlementQueueSerializer(serializers.Serializer):
    waiting_rounds = serializers.IntegerField()
    oldest_dealt_at = serializers.DateTimeField(allow_null=True)
    oldest_age_seconds = serializers.FloatField(allow_null=True)
    stuck_rounds = serializers.IntegerField()
