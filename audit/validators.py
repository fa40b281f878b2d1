from django.core.exceptions import ValidationError

REASON_REQUIRED = "A reason is required."


def required_reason(reason) -> str:
    """The reason an audited change carries, stripped; a ValidationError naming ``reason`` if blank."""
    reason = (reason or "").strip()
    if not reason:
        raise ValidationError({"reason": REASON_REQUIRED})
    return reason
