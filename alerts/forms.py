from django import forms
from django.core.exceptions import ValidationError

from audit.validators import required_reason


class NoteForm(forms.Form):
    """The note an operator leaves when acknowledging or resolving an alert (kept in the audit trail)."""

    note = forms.CharField(widget=forms.Textarea(attrs={"rows": 3, "cols": 60}),
                           help_text="What was seen or done; recorded in the audit trail.")

    def clean_note(self):
        try:
            return required_reason(self.cleaned_data["note"])
        except ValidationError:
            raise ValidationError("A note is required.") from None
