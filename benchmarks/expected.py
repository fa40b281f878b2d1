"""The expected settlement of a bet as SQL, built from the engine's own settlement rules.

The benchmarks generate, settle and check bets in set-based SQL. Every such statement takes a
bet's status and payout from these two expressions, so the rules stay written once, in the engine:
a main bet by ``games.engine.payout`` (WIN, LOSE or PUSH by bet type and outcome, the tie push, at
the bet's multiplier), a side bet by its registered push events and its own paytable
(``games.engine.paytables``: a push returns the stake, a listed event stake × its multiplier, any
other event nothing), each payout rounded down to the minor unit. Tests hold them equal to
``bet_return`` and ``bet_settlement``.
"""

from games.choices import STATUS_BY_SETTLEMENT_KIND
from games.engine import REGISTRY, SIDE_BET_TYPES
from games.engine.payout import LOSE, MINOR_UNIT, MULTIPLIER_DECIMAL_PLACES, PUSH, SETTLEMENT, WIN
from wallet.validators import MONEY_DECIMAL_PLACES, MONEY_MAX_DIGITS

# The payout is computed in whole minor units with integer arithmetic, rounded down as the engine does.
MINOR_UNITS = int(1 / MINOR_UNIT)
MULTIPLIER_UNITS = 10**MULTIPLIER_DECIMAL_PLACES


def _quoted(values) -> str:
    return ", ".join(f"'{value}'" for value in values)


def _main_whens(bet_type: str, outcome: str, value_by_kind: dict) -> list:
    """WHENs giving ``value_by_kind[kind]`` for every (main bet type, outcome) of the settlement table."""
    whens = []
    for kind, value in value_by_kind.items():
        pairs = " OR ".join(
            f"({bet_type} = '{type_}' AND {outcome} = '{outcome_}')"
            for type_, row in SETTLEMENT.items() for outcome_, kind_ in row.items() if kind_ == kind
        )
        whens.append(f"WHEN {pairs} THEN {value}")
    return whens


def _side_whens(bet_type: str, event: str, paytable: str, value_by_kind: dict) -> list:
    """WHENs giving ``value_by_kind[kind]`` for a side bet on ``event``: a push event of its type
    first (whatever its paytable lists), then an event its paytable lists (the database's CHECK
    holds a paytable's events to its type's), then any other event of its type."""
    event, paytable = f"({event})", f"({paytable})"  # whatever operators they hold bind first
    pushes = " OR ".join(
        f"({bet_type} = '{name}' AND {event} IN ({_quoted(sorted(REGISTRY[name].push_events))}))"
        for name in SIDE_BET_TYPES if REGISTRY[name].push_events
    )
    losses = " OR ".join(f"({bet_type} = '{name}' AND {event} IN ({_quoted(REGISTRY[name].events)}))"
                         for name in SIDE_BET_TYPES)
    return [
        f"WHEN {pushes} THEN {value_by_kind[PUSH]}",
        f"WHEN {bet_type} IN ({_quoted(SIDE_BET_TYPES)}) AND {paytable} ? {event} THEN {value_by_kind[WIN]}",
        f"WHEN {losses} THEN {value_by_kind[LOSE]}",
    ]


def _case(bet_type: str, outcome: str, event: str | None, paytable: str, main: dict, side: dict) -> str:
    """A CASE over every bet type and outcome (and, given ``event``, every side bet and event); NULL
    for an outcome or event it does not hold (a round not dealt, or without its events), so a check
    cannot pass by default."""
    whens = _main_whens(bet_type, outcome, main)
    if event is not None:
        whens += _side_whens(bet_type, event, paytable, side)
    return f"CASE {' '.join(whens)} END"


def expected_status_sql(bet_type: str = "b.bet_type", outcome: str = "r.outcome", event: str | None = None,
                        paytable: str = "b.paytable") -> str:
    """The bet's status once settled (WON, LOST or PUSH), from SQL expressions of its columns: a
    main bet's by its round's ``outcome``; with ``event`` (the round's event for the bet's type), a
    side bet's by that event and its ``paytable`` too."""
    statuses = {kind: f"'{status}'" for kind, status in STATUS_BY_SETTLEMENT_KIND.items()}
    return _case(bet_type, outcome, event, paytable, statuses, statuses)


def expected_payout_sql(bet_type: str = "b.bet_type", outcome: str = "r.outcome", stake: str = "b.stake",
                        multiplier: str = "b.multiplier", event: str | None = None,
                        paytable: str = "b.paytable") -> str:
    """The amount returned, stake included: ``bet_return`` (a main bet) or ``bet_settlement`` (a side
    bet, given ``event``) of a stake in whole minor units (a money column) at a multiplier of at most
    MULTIPLIER_DECIMAL_PLACES places (a multiplier column; a side bet's from its paytable's text)."""
    stake_units = f"CAST(round({stake} * {MINOR_UNITS}) AS BIGINT)"

    def won(multiplier_sql: str) -> str:  # integer division rounds down
        return f"{stake_units} * CAST(round({multiplier_sql} * {MULTIPLIER_UNITS}) AS BIGINT) / {MULTIPLIER_UNITS}"

    minor_units = _case(
        bet_type, outcome, event, paytable,
        {WIN: won(multiplier), PUSH: stake_units, LOSE: "0"},
        {WIN: won(f"CAST(({paytable}) ->> ({event}) AS NUMERIC)"), PUSH: stake_units, LOSE: "0"},
    )
    # A decimal divisor, so the division is an exact numeric.
    return f"CAST(({minor_units}) / {MINOR_UNITS}.0 AS NUMERIC({MONEY_MAX_DIGITS}, {MONEY_DECIMAL_PLACES}))"
