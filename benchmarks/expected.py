"""The expected settlement of a bet as SQL, built from the engine's own settlement table.

The benchmarks generate, settle and check bets in set-based SQL. Every such statement takes a
bet's status and payout from these two expressions, so the rules (WIN, LOSE or PUSH by bet type
and outcome, the tie push, the payout rounded down to the minor unit) stay written once, in
``games.engine.payout``; a test holds them equal to ``bet_return``.
"""

from games.choices import STATUS_BY_SETTLEMENT_KIND
from games.engine.payout import LOSE, MINOR_UNIT, MULTIPLIER_DECIMAL_PLACES, PUSH, SETTLEMENT, WIN
from wallet.validators import MONEY_DECIMAL_PLACES, MONEY_MAX_DIGITS

# The payout is computed in whole minor units with integer arithmetic, rounded down as the engine does.
MINOR_UNITS = int(1 / MINOR_UNIT)
MULTIPLIER_UNITS = 10**MULTIPLIER_DECIMAL_PLACES


def _case_by_kind(bet_type: str, outcome: str, value_by_kind: dict) -> str:
    """A CASE giving ``value_by_kind[kind]`` for every (bet type, outcome) of the settlement table;
    NULL for an outcome it does not hold (a round not dealt), so a check cannot pass by default."""
    whens = []
    for kind, value in value_by_kind.items():
        pairs = " OR ".join(
            f"({bet_type} = '{type_}' AND {outcome} = '{outcome_}')"
            for type_, row in SETTLEMENT.items() for outcome_, kind_ in row.items() if kind_ == kind
        )
        whens.append(f"WHEN {pairs} THEN {value}")
    return f"CASE {' '.join(whens)} END"


def expected_status_sql(bet_type: str = "b.bet_type", outcome: str = "r.outcome") -> str:
    """The bet's status once settled (WON, LOST or PUSH), from SQL expressions of its columns."""
    return _case_by_kind(bet_type, outcome, {kind: f"'{status}'" for kind, status in STATUS_BY_SETTLEMENT_KIND.items()})


def expected_payout_sql(bet_type: str = "b.bet_type", outcome: str = "r.outcome", stake: str = "b.stake",
                        multiplier: str = "b.multiplier") -> str:
    """The amount returned, stake included: ``bet_return`` of a stake in whole minor units (a money
    column) at a multiplier of at most MULTIPLIER_DECIMAL_PLACES places (a multiplier column)."""
    stake_units = f"CAST(round({stake} * {MINOR_UNITS}) AS BIGINT)"
    multiplier_units = f"CAST(round({multiplier} * {MULTIPLIER_UNITS}) AS BIGINT)"
    minor_units = _case_by_kind(bet_type, outcome, {
        WIN: f"{stake_units} * {multiplier_units} / {MULTIPLIER_UNITS}",  # integer division rounds down
        PUSH: stake_units,
        LOSE: "0",
    })
    # A decimal divisor, so the division is an exact numeric.
    return f"CAST(({minor_units}) / {MINOR_UNITS}.0 AS NUMERIC({MONEY_MAX_DIGITS}, {MONEY_DECIMAL_PLACES}))"
