"""The accounts API: input serializers (strict) apart from output ones. Money is a decimal string."""

from rest_framework import serializers

from backoffice.api.serializers import ExactDecimalField, StrictInputMixin, reason_field
from wallet.models import Account, LedgerEntry
from wallet.validators import MONEY_DECIMAL_PLACES, MONEY_MAX_DIGITS, validate_adjustment


def money_field(**kwargs) -> ExactDecimalField:
    return ExactDecimalField(max_digits=MONEY_MAX_DIGITS, decimal_places=MONEY_DECIMAL_PLACES, **kwargs)


def validate_external_id(value: str) -> None:
    if "/" in value:
        raise serializers.ValidationError("Must not contain '/' (the id is part of the account's URL).")
    if any(ord(char) < 32 or ord(char) == 127 for char in value):
        raise serializers.ValidationError("Must not contain control characters.")


class AccountSerializer(serializers.ModelSerializer):
    class Meta:
        model = Account
        fields = ["external_id", "currency", "balance", "created_at"]
        read_only_fields = fields


class AccountCreateSerializer(StrictInputMixin, serializers.ModelSerializer):
    class Meta:
        model = Account
        fields = ["external_id", "currency"]

    def get_fields(self):
        fields = super().get_fields()
        fields["external_id"].validators.append(validate_external_id)
        return fields


class LedgerEntrySerializer(serializers.ModelSerializer):
    account = serializers.CharField(source="account.external_id", read_only=True)
    bet = serializers.IntegerField(source="bet_id", read_only=True, allow_null=True)

    class Meta:
        model = LedgerEntry
        fields = ["id", "account", "kind", "amount", "balance_after", "bet", "reason", "created_at"]
        read_only_fields = fields


class AccountAdjustSerializer(StrictInputMixin, serializers.Serializer):
    amount = money_field(validators=[validate_adjustment],
                         help_text="Signed: positive credits, negative debits. At most 2 decimal places; "
                         "at most MAX_BALANCE either way, and no credit may take the balance past it.")
    reason = reason_field()


class AdjustmentSerializer(serializers.Serializer):
    account = AccountSerializer()
    entry = LedgerEntrySerializer()
