"""Helpers of the API tests."""

from dataclasses import dataclass

from audit.models import AuditEvent
from games.models import Bet, GameInstance, Round, SeedPair
from wallet.models import Account, LedgerEntry

API = "/api/v1"


@dataclass(frozen=True)
class Snapshot:
    games: int
    seed_pairs: int
    rounds: int
    bets: int
    accounts: int
    ledger: int
    audit: int
    balances: tuple
    game_rows: tuple
    round_rows: tuple
    seed_rows: tuple

    @classmethod
    def take(cls) -> "Snapshot":
        return cls(
            games=GameInstance.objects.count(),
            seed_pairs=SeedPair.objects.count(),
            rounds=Round.objects.count(),
            bets=Bet.objects.count(),
            accounts=Account.objects.count(),
            ledger=LedgerEntry.objects.count(),
            audit=AuditEvent.objects.count(),
            balances=tuple(Account.objects.order_by("pk").values_list("external_id", "balance")),
            game_rows=tuple(GameInstance.objects.order_by("pk").values_list(
                "slug", "name", "status", "decks", "player_multiplier", "banker_multiplier",
                "tie_multiplier", "min_bet", "max_bet", "currency")),
            round_rows=tuple(Round.objects.order_by("pk").values_list("pk", "status", "outcome")),
            seed_rows=tuple(SeedPair.objects.order_by("pk").values_list("pk", "revealed_at", "next_nonce")),
        )


def assert_names_field(response, status: int, field: str):
    assert response.status_code == status, (response.status_code, response.content)
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert field in body, body
    messages = [body[field]] if isinstance(body[field], str) else body[field]
    assert messages and all(isinstance(message, str) and message for message in messages), body
