from django import forms
from django.core.exceptions import ValidationError

from audit.validators import required_reason


class ReasonForm(forms.Form):
    """The reason an audited change carries, asked for before the change is made."""

    reason = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3, "cols": 60}),
        help_text="Recorded in the audit trail.",
    )

    def clean_reason(self):
        try:
            return required_reason(self.cleaned_data["reason"])
        except ValidationError as error:
            raise ValidationError(error.message_dict["reason"]) from None
