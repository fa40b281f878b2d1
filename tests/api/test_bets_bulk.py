"""Bulk intake: one result per item in order, each item checked and idempotent on its own."""

from decimal import Decimal

import pytest

from audit.choices import AuditAction
from audit.models import AuditEvent
from games import services
from games.api.serializers import BulkBetItemField
from games.models import Bet
from tests.api.helpers import API, assert_names_field
from wallet.choices import LedgerKind
from wallet.models import LedgerEntry

pytestmark = pytest.mark.django_db


def item(key, **overrides):
    return {"account": "player-1", "bet_type": "BANKER", "stake": "10.00", "idempotency_key": key, **overrides}


def bulk(client, round_, bets):
    return client.post(f"{API}/rounds/{round_.pk}/bets/bulk/", {"bets": bets})


def results(response):
    assert response.status_code == 200, response.content
    return response.json()["results"]


class TestAccepted:
    def test_every_item_is_accepted_in_order_with_its_ledger_entry_and_audit_event(self, as_integration,
                                                                                   open_round, player):
        bets = [item("a", stake="10.00"), item("b", bet_type="TIE", stake="20.50"), item("c", stake="1.00")]
        answer = results(bulk(as_integration, open_round, bets))
        assert [entry["status"] for entry in answer] == [201, 201, 201]
        assert [entry["bet"]["idempotency_key"] for entry in answer] == ["a", "b", "c"]
        assert answer[1]["bet"] == {**answer[1]["bet"], "bet_type": "TIE", "stake": "20.50",
                                    "multiplier": "9.0000", "status": "PENDING", "game": "main-table",
                                    "account": "player-1", "client": "game-server", "round": open_round.pk}
        player.refresh_from_db()
        assert player.balance == Decimal("468.50")
        entries = LedgerEntry.objects.filter(kind=LedgerKind.STAKE).order_by("id")
        assert [(entry.bet_id, entry.amount, entry.balance_after) for entry in entries] == [
            (answer[0]["bet"]["id"], Decimal("-10.00"), Decimal("490.00")),
            (answer[1]["bet"]["id"], Decimal("-20.50"), Decimal("469.50")),
            (answer[2]["bet"]["id"], Decimal("-1.00"), Decimal("468.50")),
        ]
        accepted = AuditEvent.objects.filter(action=AuditAction.BET_ACCEPTED)
        assert sorted(int(event.object_id) for event in accepted) == sorted(entry["bet"]["id"] for entry in answer)

    def test_bets_of_several_accounts_each_debit_their_own(self, as_integration, open_round, player,
                                                            funded_account):
        other = funded_account("player-2", "50.00")
        answer = results(bulk(as_integration, open_round, [item("a"), item("b", account="player-2", stake="50.00")]))
        assert [entry["status"] for entry in answer] == [201, 201]
        player.refresh_from_db()
        other.refresh_from_db()
        assert (player.balance, other.balance) == (Decimal("490.00"), Decimal("0.00"))


class TestPerItem:
    def test_bad_items_get_their_own_4xx_and_the_good_ones_are_written(self, as_integration, open_round, player,
                                                                        funded_account):
        funded_account("euro-player", "100.00", currency="EUR")
        bets = [
            item("ok-1"),
            item("bad-stake", stake="10.001"),
            item("bad-type", bet_type="DRAGON"),
            item("unknown-account", account="nobody-here"),
            item("other-currency", account="euro-player"),
            item("below-min", stake="0.99"),
            {"account": "player-1", "bet_type": "TIE", "stake": "1.00"},
            {**item("extra"), "multiplier": "100"},
            "not an object",
            item("ok-2", stake="2.00"),
        ]
        answer = results(bulk(as_integration, open_round, bets))
        assert [entry["status"] for entry in answer] == [201, 400, 400, 400, 400, 400, 400, 400, 400, 201]
        named = [next(iter(entry["errors"])) for entry in answer[1:-1]]
        assert named == ["stake", "bet_type", "account", "account", "stake", "idempotency_key", "multiplier",
                         "non_field_errors"]
        assert all("bet" not in entry for entry in answer[1:-1])
        assert Bet.objects.count() == 2
        player.refresh_from_db()
        assert player.balance == Decimal("488.00")

    def test_items_the_single_endpoint_takes_or_refuses_get_the_same_answers(self, as_integration, open_round,
                                                                              player):
        # A stake sent as a JSON number is read exactly (a Decimal), and a null item is refused on its own.
        body = '{"bets": [{"account": "player-1", "bet_type": "TIE", "stake": 10.50, "idempotency_key": "n"}, null]}'
        answer = results(as_integration.post(f"{API}/rounds/{open_round.pk}/bets/bulk/", body,
                                             content_type="application/json"))
        assert [entry["status"] for entry in answer] == [201, 400]
        assert answer[0]["bet"]["stake"] == "10.50"
        assert list(answer[1]["errors"]) == ["non_field_errors"]
        single = as_integration.post(f"{API}/rounds/{open_round.pk}/bets/", "null", content_type="application/json")
        assert single.status_code == 400 and single.json() == answer[1]["errors"]

    def test_the_balance_runs_down_item_by_item(self, as_integration, open_round, funded_account):
        funded_account("player-1", "25.00")
        answer = results(bulk(as_integration, open_round,
                              [item("a"), item("b"), item("c"), item("d", stake="5.00")]))
        assert [entry["status"] for entry in answer] == [201, 201, 400, 201]
        assert list(answer[2]["errors"]) == ["stake"]
        assert LedgerEntry.objects.filter(kind=LedgerKind.STAKE).order_by("id").last().balance_after == 0

    def test_a_dealt_round_refuses_every_new_item_and_still_replays(self, as_integration, open_round, player,
                                                                    integration):
        first = results(bulk(as_integration, open_round, [item("a")]))[0]
        services.round_deal(round_id=open_round.pk, actor=integration)
        answer = results(bulk(as_integration, open_round, [item("a"), item("b"), item("c", stake="abc")]))
        assert [entry["status"] for entry in answer] == [200, 409, 400]
        open_round.refresh_from_db()
        # The same bet, which now also says the event its type's rule yields on the deal.
        assert answer[0]["bet"] == {**first["bet"], "event": open_round.outcome} and first["bet"]["event"] is None
        assert list(answer[1]["errors"]) == ["round"]


class TestIdempotency:
    def test_a_replayed_request_answers_200_with_the_originals_and_debits_once(self, as_integration,
                                                                                open_round, player):
        bets = [item("a"), item("b", stake="5.00")]
        first = results(bulk(as_integration, open_round, bets))
        again = results(bulk(as_integration, open_round, bets))
        assert [entry["status"] for entry in again] == [200, 200]
        assert [entry["bet"] for entry in again] == [entry["bet"] for entry in first]
        player.refresh_from_db()
        assert player.balance == Decimal("485.00")
        assert LedgerEntry.objects.filter(kind=LedgerKind.STAKE).count() == 2

    def test_single_and_bulk_share_the_keys(self, as_integration, open_round, player):
        single = as_integration.post(f"{API}/rounds/{open_round.pk}/bets/", item("a"))
        answer = results(bulk(as_integration, open_round, [item("a"), item("a", stake="11.00")]))
        assert [entry["status"] for entry in answer] == [200, 409]
        assert answer[0]["bet"]["id"] == single.json()["id"]
        assert list(answer[1]["errors"]) == ["idempotency_key"]
        replay = as_integration.post(f"{API}/rounds/{open_round.pk}/bets/", item("b"))
        assert replay.status_code == 201
        assert results(bulk(as_integration, open_round, [item("b")]))[0]["bet"]["id"] == replay.json()["id"]

    def test_a_key_repeated_within_one_request_is_one_bet(self, as_integration, open_round, player):
        answer = results(bulk(as_integration, open_round, [item("a"), item("a"), item("a", bet_type="TIE")]))
        assert [entry["status"] for entry in answer] == [201, 200, 409]
        assert answer[1]["bet"]["id"] == answer[0]["bet"]["id"]
        assert Bet.objects.count() == 1

    def test_a_key_whose_first_item_was_refused_can_still_be_used(self, as_integration, open_round, player):
        answer = results(bulk(as_integration, open_round, [item("a", stake="600.00"), item("a")]))
        assert [entry["status"] for entry in answer] == [400, 201]

    def test_the_same_key_on_another_round_is_409(self, as_integration, open_round, player, game, integration):
        results(bulk(as_integration, open_round, [item("a")]))
        other = services.round_open(game_id=game.pk, actor=integration)
        answer = results(bulk(as_integration, other, [item("a")]))
        assert answer[0]["status"] == 409 and list(answer[0]["errors"]) == ["idempotency_key"]


class TestEnvelope:
    @pytest.mark.parametrize("body,field", [
        ({}, "bets"),
        ({"bets": []}, "bets"),
        ({"bets": "abc"}, "bets"),
        ({"bets": [item("a")], "round": 5}, "round"),
    ])
    def test_a_bad_envelope_is_400_and_writes_nothing(self, as_integration, open_round, player, unchanged,
                                                      body, field):
        with unchanged():
            response = as_integration.post(f"{API}/rounds/{open_round.pk}/bets/bulk/", body)
        assert_names_field(response, 400, field)

    def test_more_items_than_allowed_is_400(self, as_integration, open_round, player, unchanged, settings):
        assert settings.BET_BULK_MAX_ITEMS == 1000
        with unchanged():
            response = bulk(as_integration, open_round, [item(f"k{index}") for index in range(1001)])
        assert_names_field(response, 400, "bets")

    def test_too_many_items_are_refused_before_any_is_looked_at(self, as_integration, open_round, monkeypatch):
        looked_at = []
        monkeypatch.setattr(BulkBetItemField, "to_internal_value", lambda field, data: looked_at.append(data))
        response = bulk(as_integration, open_round, [1.5] * 100_000)
        assert_names_field(response, 400, "bets")
        assert response.json() == {"bets": ["Ensure this field has no more than 1000 elements."]}
        assert looked_at == []

    def test_an_unknown_round_is_404_and_writes_nothing(self, as_integration, player, unchanged):
        with unchanged():
            response = as_integration.post(f"{API}/rounds/999999/bets/bulk/", {"bets": [item("a")]})
        assert response.status_code == 404

    def test_the_endpoint_is_in_the_schema(self, api_as, operator):
        schema = api_as(operator).get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
        operation = schema["paths"]["/api/v1/rounds/{round_id}/bets/bulk/"]["post"]
        assert "200" in operation["responses"] and "404" in operation["responses"]
