from django.core.exceptions import ValidationError

from audit.forms import ReasonForm
from backoffice.forms import ExactDecimalFormField
from wallet.validators import MONEY_DECIMAL_PLACES, MONEY_MAX_DIGITS


class AdjustBalanceForm(ReasonForm):
    amount = ExactDecimalFormField(
        max_digits=MONEY_MAX_DIGITS, decimal_places=MONEY_DECIMAL_PLACES,
        help_text="Positive credits the account, negative debits it.",
    )
    field_order = ["amount", "reason"]

    def clean_amount(self):
        amount = self.cleaned_data["amount"]
        if amount == 0:
            raise ValidationError("Must not be zero.")
        return amount
