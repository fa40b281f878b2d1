from rest_framework import serializers

from backoffice.api.serializers import StrictInputMixin, reason_field
from settlement.models import SettlementBatch


class CurrencyTotalsSerializer(serializers.Serializer):
    bets = serializers.IntegerField()
    staked = serializers.CharField(help_text="Decimal text in the currency's places.")
    paid = serializers.CharField(help_text="Decimal text in the currency's places.")


class SettlementBatchSerializer(serializers.ModelSerializer):
    totals = serializers.DictField(child=CurrencyTotalsSerializer(), read_only=True,
                                   help_text="By currency: amounts of two currencies are never added.")

    class Meta:
        model = SettlementBatch
        fields = ["id", "worker", "started_at", "finished_at", "rounds", "bets", "total_staked", "total_paid",
                  "totals", "round_ids", "outcome", "error"]
        extra_kwargs = {"total_staked": {"help_text": "The batch's sum when all its rounds play in one currency; "
                                                      "null when they play in several (see totals)."},
                        "total_paid": {"help_text": "As total_staked."}}


class BatchFilterSerializer(serializers.Serializer):
    outcome = serializers.ChoiceField(choices=SettlementBatch.Outcome.choices, required=False)


class SettlementQueueSerializer(serializers.Serializer):
    waiting_rounds = serializers.IntegerField()
    oldest_dealt_at = serializers.DateTimeField(allow_null=True)
    oldest_age_seconds = serializers.FloatField(allow_null=True)
    stuck_rounds = serializers.IntegerField()
    held_bets = serializers.IntegerField(help_text="Bets whose settlement failed in a settled round: HELD for an "
                                         "operator (POST /api/v1/bets/{id}/settle-held/).")


class HeldBetSettleSerializer(StrictInputMixin, serializers.Serializer):
    reason = reason_field()
