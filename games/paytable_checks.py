"""The database's own checks of paytables stored as JSON: a game's side bets and a side bet's
paytable kept with the bet (games.engine.paytables states the rule; the model and the serializers
check it with the engine; this is the same rule as CHECK constraints, built from the registry).

Each check is a JSON path that must find nothing (a type in strict mode, which does not look
inside an array as lax mode does): an event its bet type does not have, a
multiplier that is not decimal text of 1 to 1000 with at most four places, a push not at exactly 1.
A multiplier is compared as a double only once its text has at most four digits either side of the
point, where the comparison with 1 and 1000 is exact.
"""

from django.db.models import BooleanField, Func, Q
from django.db.models.lookups import Exact

from games.engine import REGISTRY, SIDE_BET_TYPES
from games.engine.payout import MAX_MULTIPLIER, MIN_MULTIPLIER, MULTIPLIER_DECIMAL_PLACES

_DIGITS = len(str(int(MAX_MULTIPLIER)))
_MULTIPLIER_TEXT = f"^[0-9]{{1,{_DIGITS}}}([.][0-9]{{1,{MULTIPLIER_DECIMAL_PLACES}}})?$"
_BAD_MULTIPLIER = (f'@.type() != "string" || !(@ like_regex "{_MULTIPLIER_TEXT}") '
                   f"|| @.double() < {MIN_MULTIPLIER} || @.double() > {MAX_MULTIPLIER}")


class _PathFinds(Func):
    """jsonb_path_exists(column, path): the path given as SQL text of the constraint."""

    output_field = BooleanField()

    def __init__(self, column: str, path: str):
        assert "'" not in path and "%" not in path, "the path is written into the SQL as it is"
        # Silent: a path that meets an error (a key that is not there, in strict mode) finds nothing.
        super().__init__(column, template=f"jsonb_path_exists(%(expressions)s, '{path}', '{{}}', true)")


def _finds_nothing(column: str, path: str):
    return Exact(_PathFinds(column, path), False)


def _one_of(names) -> str:
    return f'^({"|".join(names)})$'


def _paytable_paths(at: str, name: str) -> list:
    """The paths that find a fault in the paytable of side bet ``name`` found at ``at``."""
    kind = REGISTRY[name]
    paths = [f'strict {at} ? (@.type() != "object")',
             f'{at}.keyvalue() ? (!(@.key like_regex "{_one_of(kind.events)}"))',
             f"{at}.* ? ({_BAD_MULTIPLIER})"]
    paths += [f'{at}."{event}" ? (@.double() != 1)' for event in sorted(kind.push_events)]
    return paths


def paytable_valid(column: str, name: str) -> Q:
    """``column`` holds a valid paytable of side bet ``name``."""
    return Q(*(_finds_nothing(column, path) for path in _paytable_paths("$", name)))


def side_bets_valid(column: str) -> Q:
    """``column`` maps side bets to valid paytables of theirs."""
    paths = ['strict $ ? (@.type() != "object")', f'$.keyvalue() ? (!(@.key like_regex "{_one_of(SIDE_BET_TYPES)}"))']
    for name in SIDE_BET_TYPES:
        paths += _paytable_paths(f'$."{name}"', name)
    return Q(*(_finds_nothing(column, path) for path in paths))
