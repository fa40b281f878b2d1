"""Argument parsing shared by the game-core commands (verify_round, odds, bench_engine, rng_report).

Errors are one line naming the field and end the command with exit status 2, as argparse does.
"""

import re

from django.core.management.base import CommandError

from games.engine import Pf1InputError

USAGE_ERROR = 2

# Plain ASCII decimal, optionally negative: int() alone would also take " 5", "+5", "5_0" and the
# digits of other scripts, which a verifier should not silently accept.
_INTEGER_RE = re.compile(r"-?[0-9]+")


def usage_error(message: str) -> CommandError:
    """The error to raise: Django prints ``CommandError: <message>`` on one line and exits 2."""
    return CommandError(message, returncode=USAGE_ERROR)


def integer_option(value, validate):
    """An option given as text (command line) or int (call_command), checked by an engine
    validator such as ``validate_nonce``; text that is not an integer is handed over unchanged so
    that the validator's message, which names the field, reports it."""
    if isinstance(value, str) and _INTEGER_RE.fullmatch(value):
        value = int(value)
    try:
        return validate(value)
    except Pf1InputError as error:
        raise usage_error(str(error)) from None


def positive(name: str, value) -> int:
    """A count such as --rounds: a whole number of at least 1."""
    try:
        number = int(value)
    except (TypeError, ValueError):
        number = 0
    if isinstance(value, bool) or number < 1:
        raise usage_error(f"{name}: must be a positive integer")
    return number
