"""Field validators of the game's models; the API serializers and the admin forms use them too."""

from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator

from games.engine import MAX_DECKS, MIN_DECKS, Pf1InputError, multiplier_problem, validate_client_seed
from games.engine.payout import MAX_MULTIPLIER, MULTIPLIER_DECIMAL_PLACES

# Whole digits enough for the largest multiplier, and the engine's decimal places.
MULTIPLIER_MAX_DIGITS = len(str(int(MAX_MULTIPLIER))) + MULTIPLIER_DECIMAL_PLACES


def validate_multiplier(value) -> None:
    problem = multiplier_problem(value if not isinstance(value, float) else str(value))
    if problem:
        raise ValidationError(f"A multiplier {problem}.", code="invalid_multiplier")


def validate_decks(value) -> None:
    if not MIN_DECKS <= value <= MAX_DECKS:
        raise ValidationError(f"A shoe holds {MIN_DECKS} to {MAX_DECKS} decks.", code="invalid_decks")


# The same rule as a pattern, for the API's schema: no character of category Cc (U+0000-U+001F,
# U+007F-U+009F); lone surrogates (Cs) cannot be sent as UTF-8 at all.
CLIENT_SEED_PATTERN = r"^[^\x00-\x1f\x7f-\x9f]+$"


def validate_client_seed_field(value) -> None:
    """PF-1's rule for a client seed (1 to 64 characters, no control characters)."""
    try:
        validate_client_seed(value)
    except Pf1InputError as error:
        raise ValidationError(f"A client seed {error.message}.", code="invalid_client_seed") from None


# An idempotency key: 1 to 100 visible ASCII characters (no space, control character, newline or
# bidirectional override), so that a key reads the same in every log, page and export.
IDEMPOTENCY_KEY_MAX_LENGTH = 100
IDEMPOTENCY_KEY_PATTERN = rf"^[!-~]{{1,{IDEMPOTENCY_KEY_MAX_LENGTH}}}\Z"
# The same rule as a database CHECK ("$" is the end in PostgreSQL's regexes).
IDEMPOTENCY_KEY_CHECK_PATTERN = rf"^[!-~]{{1,{IDEMPOTENCY_KEY_MAX_LENGTH}}}$"

validate_idempotency_key = RegexValidator(
    IDEMPOTENCY_KEY_PATTERN,
    f"Must be 1 to {IDEMPOTENCY_KEY_MAX_LENGTH} visible ASCII characters (! to ~): no spaces or control characters.",
    code="invalid_idempotency_key",
)
