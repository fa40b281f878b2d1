"""Field validators of the game's models; the API serializers and the admin forms use them too."""

import re

from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator

from games.engine import (
    BET_TYPES,
    MAX_DECKS,
    MIN_DECKS,
    Pf1InputError,
    multiplier_problem,
    side_bets_problems,
    validate_client_seed,
)
from games.engine.payout import MAX_MULTIPLIER, MULTIPLIER_DECIMAL_PLACES
from games.engine.pf1 import CLIENT_SEED_MAX_LENGTH

BET_TYPE_MAX_LENGTH = 24
assert max(map(len, BET_TYPES)) <= BET_TYPE_MAX_LENGTH, "a registered bet type's name fits the column"

# Whole digits enough for the largest multiplier, and the engine's decimal places.
MULTIPLIER_MAX_DIGITS = len(str(int(MAX_MULTIPLIER))) + MULTIPLIER_DECIMAL_PLACES


def validate_multiplier(value) -> None:
    problem = multiplier_problem(value if not isinstance(value, float) else str(value))
    if problem:
        raise ValidationError(f"A multiplier {problem}.", code="invalid_multiplier")


def validate_side_bets(value) -> None:
    """A game's side bets: {side bet type: paytable}, each paytable valid for its bet type (a form
    or serializer names the bet type and event of the first problem)."""
    problems = side_bets_problems(value)
    if problems:
        raise ValidationError([f"{where}: {problem}." for where, problem in problems.items()],
                              code="invalid_side_bets")


def validate_decks(value) -> None:
    if not MIN_DECKS <= value <= MAX_DECKS:
        raise ValidationError(f"A shoe holds {MIN_DECKS} to {MAX_DECKS} decks.", code="invalid_decks")


# A new client seed (a game's first pair, a rotation) is 1 to 64 characters of a safe alphabet: ASCII
# letters and digits, and "-", ".", "_", "~" after the first character. Such a seed is one word as it
# is in every shell, URL, CSV cell and log, and never read as a command-line option. (PF-1 itself
# verifies any seed without control characters: pairs an earlier release made keep theirs.)
# The same rule is the database's CHECK (migration games 0014) and the API schema's pattern.
CLIENT_SEED_PATTERN = rf"^[A-Za-z0-9][A-Za-z0-9._~-]{{0,{CLIENT_SEED_MAX_LENGTH - 1}}}$"
CLIENT_SEED_RULE = ("is 1 to 64 characters: the letters A-Z and a-z, the digits 0-9, and - . _ ~ "
                    "after the first character")
_CLIENT_SEED_RE = re.compile(CLIENT_SEED_PATTERN.removesuffix("$"))


def is_safe_client_seed(value) -> bool:
    return isinstance(value, str) and _CLIENT_SEED_RE.fullmatch(value) is not None


def validate_client_seed_field(value) -> None:
    """The rule for a new client seed: PF-1's (1 to 64 characters, no control characters), within the
    safe alphabet."""
    try:
        validate_client_seed(value)
    except Pf1InputError as error:
        raise ValidationError(f"A client seed {error.message}.", code="invalid_client_seed") from None
    if not is_safe_client_seed(value):
        raise ValidationError(f"A client seed {CLIENT_SEED_RULE}.", code="invalid_client_seed")


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
