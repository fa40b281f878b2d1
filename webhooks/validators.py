from django.core.exceptions import ValidationError
from django.core.validators import URLValidator

from webhooks.choices import EventType

validate_endpoint_url = URLValidator(schemes=["http", "https"], message="Enter an http:// or https:// URL.")


def validate_event_types(value) -> None:
    if not isinstance(value, list) or not value:
        raise ValidationError("Choose at least one event.")
    unknown = sorted({str(item) for item in value} - set(EventType.values))
    if unknown or not all(isinstance(item, str) for item in value):
        raise ValidationError(f"Unknown event(s): {', '.join(unknown)}. Known: {', '.join(EventType.values)}.")
    if len(set(value)) != len(value):
        raise ValidationError("Each event once.")
