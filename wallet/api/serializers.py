"""The accounts API: input serializers (strict) apart from output ones. Money is a decimal string."""

from rest_framework import serializers

from backoffice.api.serializers import ExactDecimalField, StrictInputMixin, reason_field
from core.currencies import amount_text
from wallet.fields import MoneyField
from wallet.models import Account, LedgerEntry
from wallet.validators import MONEY_DECIMAL_PLACES, MONEY_MAX_DIGITS, validate_adjustment


def money_field(**kwargs) -> "MoneyDecimalField":
    return MoneyDecimalField(max_digits=MONEY_MAX_DIGITS, decimal_places=MONEY_DECIMAL_PLACES, **kwargs)


def _loaded_currency(instance) -> str | None:
    """The currency of a row holding money, when it is at hand without a query: its own (an account,
    a game), its account's (a ledger entry, a bet) or its round's game's (a bet)."""
    for path in (("currency",), ("account", "currency"), ("round", "game", "currency")):
        row = instance
        for name in path[:-1]:
            cache = getattr(getattr(row, "_state", None), "fields_cache", {})
            row = cache.get(name)
            if row is None:
                break
        currency = getattr(row, "__dict__", {}).get(path[-1]) if row is not None else None
        if isinstance(currency, str):
            return currency
    return None


class MoneyDecimalField(ExactDecimalField):
    """Money read exactly and kept as sent (the column's 8 places checked, its currency's by the
    services: "100.5" stays 100.5 to be refused on a JPY table, not padded to 100.50000000); written
    at its currency's places (USD "10.00", JPY "100", KWD "1.250"), or, when the currency is not at
    hand, with the places the amount needs and at least two."""

    def quantize(self, value):
        return value

    def get_attribute(self, instance):
        value = super().get_attribute(instance)
        return None if value is None else (value, _loaded_currency(instance))

    def to_representation(self, value):
        amount, currency = value if isinstance(value, tuple) else (value, None)
        return amount_text(amount, currency)


# Every model serializer writes a MoneyField with it (the strict input ones too).
serializers.ModelSerializer.serializer_field_mapping[MoneyField] = MoneyDecimalField
StrictInputMixin.serializer_field_mapping[MoneyField] = MoneyDecimalField


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
                         help_text="Signed: positive credits, negative debits. At most the account currency's places; "
                         "at most MAX_BALANCE either way, and no credit may take the balance past it.")
    reason = reason_field()


class AdjustmentSerializer(serializers.Serializer):
    account = AccountSerializer()
    entry = LedgerEntrySerializer()
